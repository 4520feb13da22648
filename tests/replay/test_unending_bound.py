"""A random-rounding sample past the largest finite value: the element's bound has no end.

Where a program amplifies its own rounding without limit (a backward pass through a softmax
that fake data saturated, twelve layers deep), the noise stage's samples land beyond f32's
largest value, and the range kept in f32 says so with an infinity. That element can legally
be anything: the bound must not end there. It once counted as no spread at all, and the
verdict called a legal value a mismatch with a bound of nearly nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import widened_module
from workbench.replay.judge.compare import Truth, compare
from workbench.replay.judge.error_bound import perturb, truth_of, widen, with_noise
from workbench.replay.judge.noise.run import noise_of

# d = x * 3 - x * 3 is 0 when both products round alike (the strict reference, the truth),
# and what their roundings leave when they do not (random rounding; a compiler that fuses one
# product into the subtraction). exp(d * 2^30) amplifies that without limit; a = x * 3 does
# not.
AMPLIFIED = """HloModule amplified
ENTRY main {
  x = f32[64] parameter(0)
  three = f32[] constant(3)
  threes = f32[64] broadcast(three), dimensions={}
  a = f32[64] multiply(x, threes)
  b = f32[64] multiply(x, threes)
  d = f32[64] subtract(a, b)
  scale = f32[] constant(1073741824)
  scales = f32[64] broadcast(scale), dimensions={}
  r = f32[64] multiply(d, scales)
  e = f32[64] exponential(r)
  ROOT out = (f32[64], f32[64]) tuple(e, a)
}
"""


def _inputs() -> np.ndarray:
    return np.random.default_rng(3).uniform(1.0, 2.0, 64).astype(np.float32)


def _truth(x: np.ndarray) -> tuple[Any, Truth, Any]:
    module = parse_hlo_text(AMPLIFIED)
    strict = evaluate_module(module, [x])
    shadow = widened_module(module)
    base = truth_of(strict, evaluate_module(shadow, [widen(x)]),
                    evaluate_module(shadow, perturb([x])))
    noise = noise_of(module, [widen(x)])
    return strict, with_noise(base, noise, strict), noise


def test_an_element_a_sample_takes_past_f32s_largest_is_within_an_unending_bound() -> None:
    x = _inputs()
    strict, truth, noise = _truth(x)
    assert np.all(strict[0] == 1.0) and np.allclose(truth.value[0], 1.0)
    assert np.isinf(noise.high[0]).any()  # some sample passed f32's largest value
    # Where a sample passed f32's largest value, 1e30 lies within the samples' range (they
    # reach from below it to past f32's largest): far from the truth, and legal.
    unbounded = np.isinf(noise.high[0])
    assert np.all(noise.low[0][unbounded] < 1e30)
    legal = (np.where(unbounded, np.float32(1e30), strict[0]), strict[1])
    comparison = compare(strict, legal, truth=truth)
    assert comparison.ok, comparison.summary
    assert comparison.unbounded == int(np.count_nonzero(unbounded))
    assert f"{comparison.unbounded} element(s) have no bound" in comparison.summary
    assert np.all(np.isinf(truth.bound[0]) == np.isinf(noise.high[0]))


def test_an_unending_bound_takes_no_nan_and_the_bounded_output_still_judges() -> None:
    x = _inputs()
    strict, truth, _ = _truth(x)
    e, a = strict
    unbounded = int(np.flatnonzero(np.isinf(truth.bound[0]))[0])
    undefined = e.copy()
    undefined[unbounded] = np.nan
    assert not compare(strict, (undefined, a), truth=truth).ok
    wrong = a.copy()
    wrong[5] *= np.float32(1.01)  # x * 3 one percent off: its bound is an ulp or two
    assert not compare(strict, (e, wrong), truth=truth).ok


def test_a_scalar_output_takes_an_unending_bound_too() -> None:
    """A 0-d output (a loss) with no end to its bound: any number within it, a NaN beyond."""
    expected = np.array(1.0, np.float32)
    truth = Truth(np.array(1.0), np.array(np.inf), (), None, None)
    far = compare(expected, np.array(1e30, np.float32), truth=truth)
    assert far.ok and far.unbounded == 1
    assert not compare(expected, np.array(np.nan, np.float32), truth=truth).ok

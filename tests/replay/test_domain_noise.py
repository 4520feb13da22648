"""Rounding that decides whether a value is finite: `sqrt` of an operand within rounding of 0.

`simplify-fp-conversions` removes `convert(convert(x, bf16), f32)` (excess precision is legal
on GPU and CPU under `xla_allow_excess_precision`, on by default). Where the bf16 rounding it
skips is what kept a square root's operand non-negative (AdamW's second moment on random data),
the f64 truth is NaN, the strict reference finite, and the step NaN or another finite value:
all legal. The noise stage judges such elements against the random-rounding samples (their
middle, NaN legal where a sample or the truth was NaN) and names the `sqrt` that flips.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import shadow_module
from workbench.replay.judge.compare import compare
from workbench.replay.judge.error_bound import perturb, truth_of, widen, with_noise
from workbench.replay.judge.noise.run import noise_of

REFERENCE = """HloModule jit_f, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[8]{0}}

ENTRY %main (x: f32[8], y: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %y = f32[8]{0} parameter(1)
  %narrow = bf16[8]{0} convert(%x)
  %wide = f32[8]{0} convert(%narrow)
  %moment = f32[8]{0} subtract(%wide, %y)
  %root = f32[8]{0} sqrt(%moment)
  %one = f32[] constant(1)
  %ones = f32[8]{0} broadcast(%one), dimensions={}
  ROOT %update = f32[8]{0} add(%root, %ones)
}
"""
# What simplify-fp-conversions leaves: the convert pair gone.
SIMPLIFIED = REFERENCE.replace(
    "%moment = f32[8]{0} subtract(%wide, %y)", "%moment = f32[8]{0} subtract(%x, %y)"
)


def arguments() -> list[np.ndarray]:
    """x just below a bf16 value r, y = r minus a little: x rounds up to r in bf16, so the
    strict reference's moment is a small positive number where the truth's is negative."""
    r = np.linspace(1.0, 2.0, 8).astype(ml_dtypes.bfloat16).astype(np.float32)
    ulp = np.spacing(r.astype(ml_dtypes.bfloat16)).astype(np.float32)
    x = (r - ulp / 8).astype(np.float32)
    y = (r - ulp / 64).astype(np.float32)
    return [x, y]


def judged(actual: np.ndarray) -> tuple[bool, str]:
    module = parse_hlo_text(REFERENCE)
    args = arguments()
    strict = evaluate_module(module, args)
    shadow = evaluate_module(shadow_module(module), [widen(a) for a in args])
    perturbed = evaluate_module(shadow_module(module), perturb(args))
    noise = noise_of(module, [widen(a) for a in args])
    truth = with_noise(truth_of(strict, shadow, perturbed), noise, strict)
    comparison = compare(strict, actual, truth=truth)
    names = ", ".join(str(d) for d in noise.discontinuities)
    return comparison.ok, names


def test_the_reference_is_finite_where_the_truth_is_nan() -> None:
    module = parse_hlo_text(REFERENCE)
    args = arguments()
    strict = np.asarray(evaluate_module(module, args))
    shadow = np.asarray(evaluate_module(shadow_module(module), [widen(a) for a in args]))
    assert np.all(np.isfinite(strict)) and np.all(np.isnan(shadow))


def test_the_step_without_the_rounding_is_ok_and_the_sqrt_named() -> None:
    simplified = np.asarray(evaluate_module(parse_hlo_text(SIMPLIFIED), arguments()))
    assert np.all(np.isnan(simplified))  # f32 keeps x below r: the moment is negative
    ok, names = judged(simplified)
    assert ok
    assert "root (sqrt) flips" in names


def test_a_finite_value_within_the_samples_is_ok_and_one_beyond_them_is_not() -> None:
    module = parse_hlo_text(REFERENCE)
    strict = np.asarray(evaluate_module(module, arguments()))
    noise = noise_of(module, [widen(a) for a in arguments()])
    assert np.all(np.isfinite(noise.high)) and np.all(noise.nan_seen)
    inside = (noise.low + noise.high) / 2  # a value some legal rounding gives
    assert judged(inside.astype(np.float32))[0]
    beyond = strict + 2.0  # sqrt of a moment within one bf16 ulp is far below 1
    assert not judged(beyond.astype(np.float32))[0]

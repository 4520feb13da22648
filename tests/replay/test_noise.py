"""Rounding noise inside the program: the noise stage of the verdict, on real XLA CPU dumps.

`tests/data/noise/` holds two small JAX programs' dumps (`program.py` beside each; a few of
their per-pass steps, as `.hlo.pb`, and the snapshot):

- `gpt_adamw_mini`: a one-layer GPT-like decoder's first AdamW step (bf16 compute, f32
  parameters). AdamW's first update is about lr * g / |g|; where a gradient nearly cancels,
  legal rounding flips its sign. Real XLA's recording and `float-normalization-bf16` (which
  computes in f32 what the program rounds to bf16) land on the other side than the strict
  reference and the f64 truth at a few elements, off by lr: without the noise stage that pass
  was named the culprit.
- `moe_router_mini`: a mixture-of-experts router whose two best bf16 logits nearly tie:
  argmax and top-k of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.cli import run_json
from tests.helpers.planting import plant
from workbench.index import scan
from workbench.replay.bisect import bisect_replay, evaluation_bound
from workbench.replay.judge.error_bound import widen
from workbench.replay.judge.noise.model import SAMPLES
from workbench.replay.judge.noise.random_rounding import randomly_rounded
from workbench.replay.judge.noise.run import noise_of
from workbench.replay.steps import open_replay

NOISE = Path(__file__).resolve().parents[1] / "data" / "noise"
GPT = NOISE / "gpt_adamw_mini"
MOE = NOISE / "moe_router_mini"




def test_a_sign_flip_within_noise_is_ok_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "bisect", GPT, "module_0022", "--json", "--linear")
    assert status == 0 and payload["status"] == "ok", payload["detail"]
    assert all(r["status"] == "ok" for r in payload["results"])
    assert payload["noise_evaluations"] == 1
    # The step that computes bf16 in f32 needed the noise stage, and says where noise decides:
    # AdamW's divide m / (sqrt(v) + eps), about sign(m), whose numerator is within its noise
    # of zero at some elements: the split sample moves it across there, the update by 2 lr.
    normalized = next(r for r in payload["results"] if r["xla_step"] == 8)
    widened = normalized["comparison"]["widened_by"]
    assert widened and widened[0]["opcode"] == "divide" and widened[0]["how"] == "flips"
    assert widened[0]["op_name"].endswith("/div")
    assert "rounding noise inside the program" in normalized["comparison"]["summary"]
    assert widened[0]["instruction"] in normalized["comparison"]["summary"]
    assert payload["recorded"]["ok"]


def test_without_the_noise_stage_the_precision_change_is_blamed() -> None:
    """The numbers the noise stage beats: stages 1 and 2 alone name float-normalization-bf16,
    off by 2 x lr (AdamW's lr is 1e-3) where the bound is about 1e-6."""
    module = next(m for m in scan(GPT).modules if m.key == "module_0022")
    with open_replay(GPT, module, module.executions[0]) as replay:
        replay.noise = False
        verdict = bisect_replay(replay)
    assert verdict.culprit is not None
    assert verdict.culprit.step.pass_name == "float-normalization-bf16"
    bound = verdict.culprit.comparison.bound
    assert bound is not None and bound.ratio > 100 and abs(bound.error - 2e-3) < 1e-4
    assert verdict.noise_evaluations == 0


def test_the_noise_stage_comes_only_after_the_other_two() -> None:
    module = next(m for m in scan(GPT).modules if m.key == "module_0022")
    with open_replay(GPT, module, module.executions[0]) as replay:
        replay.reference  # noqa: B018
        conditioning = replay.truth(True)
        noisy = replay.truth("noise")
        assert conditioning is not None and noisy is not None
        # Each element's bound only grows, and it grows by far only somewhere.
        for before, after in zip(conditioning.bound, noisy.bound, strict=True):
            if before is None:
                assert after is None
                continue
            assert np.all(after >= before)
        growth = np.concatenate([np.ravel(a - b) for a, b in
                                 zip(noisy.bound, conditioning.bound, strict=True)
                                 if b is not None])
        assert np.median(growth) < 1e-4 < growth.max()


@pytest.mark.parametrize("from_step", [8, "after"])
def test_a_planted_bug_behind_the_sign_flip_is_named(
        from_step: int | str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """exp -> expm1 (the softmax's) planted at the precision change, or only in the last step."""
    planted = tmp_path / "gpt"
    step = 9999 if from_step == "after" else from_step
    assert plant(GPT, planted, "module_0022", step, "exponential", "exponential-minus-one")
    status, payload = run_json(capsys, "bisect", planted, "module_0022", "--json")
    assert status == 1 and payload["status"] == "mismatch"
    assert payload["culprit"]["xla_step"] == (None if from_step == "after" else from_step)
    assert payload["culprit"]["pass"] == ("cpu_after_optimizations" if from_step == "after"
                                          else "float-normalization-bf16")
    assert payload["evaluations"] <= evaluation_bound(payload["steps"])
    culprit = next(r for r in payload["results"] if r["index"] == payload["culprit"]["index"])
    assert float(culprit["comparison"]["bound"]["ratio"]) > 10  # "inf" in JSON when unbounded


def test_an_argmax_tie_within_noise_is_found_and_ok(capsys: pytest.CaptureFixture[str]) -> None:
    module = next(m for m in scan(MOE).modules if m.executions)
    with open_replay(MOE, module, module.executions[0]) as replay:
        hlo = replay.backend.load(replay.steps[0])
        noise = noise_of(hlo, [widen(a) for a in replay.inputs.arguments])
    flipped = [d for d in noise.discontinuities if d.flipped]
    # argmax is a variadic reduce (value, index): its index flips for the near-tied tokens.
    argmax = [d for d in flipped if d.opcode == "reduce" and d.computation.startswith("argmax")]
    assert argmax and 0 < argmax[0].elements < 32
    # The samples differ from each other (fixed seeds: the same on every run).
    again = noise_of(hlo, [widen(a) for a in replay.inputs.arguments])
    assert all(np.array_equal(a, b) for a, b in zip(noise.low, again.low, strict=True))
    assert SAMPLES > 1
    status, payload = run_json(capsys, "bisect", MOE, module.key, "--json", "--linear")
    assert status == 0 and payload["status"] == "ok", payload["detail"]


def test_a_planted_bug_behind_the_tie_is_named(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    planted = tmp_path / "moe"
    assert plant(MOE, planted, "module_0000", 30, "tanh", "logistic")
    status, payload = run_json(capsys, "bisect", planted, "module_0000", "--json")
    assert status == 1 and payload["culprit"]["xla_step"] == 30


def test_a_planted_bug_is_named_by_bisect_replay_too(tmp_path: Path) -> None:
    planted = tmp_path / "gpt"
    plant(GPT, planted, "module_0022", 8, "exponential", "exponential-minus-one")
    module = next(m for m in scan(planted).modules if m.key == "module_0022")
    with open_replay(planted, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay)
    assert verdict.culprit is not None and verdict.culprit.step.xla_step == 8


SIGN_OF_A_CANCELLATION = """HloModule m

ENTRY main {
  x = bf16[4] parameter(0)
  y = bf16[4] parameter(1)
  b = bf16[4] parameter(2)
  a = bf16[4] multiply(x, y)
  d = bf16[4] subtract(a, b)
  s = bf16[4] sign(d)
  z = bf16[4] constant({0, 0, 0, 0})
  p = pred[4] compare(d, z), direction=GT
  one = bf16[4] constant({1, 1, 1, 1})
  ROOT r = bf16[4] select(p, one, s)
}
"""


def test_noise_names_the_compare_an_operand_within_noise_flips() -> None:
    """d = x * y - b is about 0 at element 0 (within the noise of rounding x * y to bf16),
    far from it elsewhere: the compare (and sign) flip there only, the spread is there only."""
    from workbench.formats.hlo_text import parse_hlo_text

    module = parse_hlo_text(SIGN_OF_A_CANCELLATION)
    x = np.array([1.0 + 2 ** -12, 1.0, 2.0, -3.0])  # the widened arguments (f64)
    y = np.ones(4)
    b = np.array([1.0, 0.5, 1.0, 3.0])  # d[0] = 2^-12: inside a bf16 ulp (2^-7) of 1
    noise = noise_of(module, [x, y, b])
    flipped = [d for d in noise.discontinuities if d.flipped]
    # The compare flips between samples; the split sample moves d across zero for sign too
    # unless the samples' middle already lies on the other side (then they cover both).
    assert ("p", 1) in {(d.name, d.elements) for d in flipped}
    assert {(d.name, d.elements) for d in flipped} <= {("p", 1), ("s", 1)}
    spread = noise.high - noise.low
    assert spread[0] >= 1.0  # either side: 1 (d > 0) or sign(d) = -1
    # Far from the threshold: the same side in every sample (select's 1).
    assert np.all(spread[1:] == 0)
    again = noise_of(module, [x, y, b])
    assert np.array_equal(noise.low, again.low) and np.array_equal(noise.high, again.high)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (1100, 1000)])
def test_random_rounding_moves_each_element_within_its_eps(dtype: type,
                                                           shape: tuple[int, ...]) -> None:
    """Each element moves by a factor in [1 - eps, 1 + eps), independently (the last shape is
    larger than the pool of draws: a window of it per pool's worth of elements), the same way
    after the same reseed and differently in another sample."""
    from workbench.replay.judge.noise.random_rounding import Draws

    value = np.full(shape, 1e3, dtype=dtype)
    if np.dtype(dtype).kind == "c":
        value = value + 2e3j
    eps = 2.0**-20
    draws = Draws()
    draws.reseed(4)
    got = randomly_rounded(draws, value, eps)
    assert got.dtype == value.dtype and got.shape == value.shape
    factor = np.real(got / value).astype(np.float64)
    assert np.all(np.abs(factor - 1.0) <= eps * (1 + 1e-6))
    if factor.size > 1000 and dtype is np.float64:  # f32 keeps a few steps of 2^-20
        moved = (factor - 1.0) / eps
        assert abs(float(moved.mean())) < 0.01 and 0.3 < float(moved.std()) < 0.7
        assert np.count_nonzero(np.diff(moved.reshape(-1)) == 0) < factor.size // 100
    signs = np.ones(shape)
    draws.flip(signs)  # a window of signs per pool's worth of elements
    assert set(np.unique(signs)) <= {-1.0, 1.0}
    if signs.size > 1000:
        assert abs(float(signs.mean())) < 0.01
    again = Draws()
    again.reseed(4)
    assert np.array_equal(randomly_rounded(again, value, eps), got)
    if value.size > 1:
        again.reseed(5)
        assert not np.array_equal(randomly_rounded(again, value, eps), got)


DOT = """HloModule dot_in_{type}
ENTRY main {{
  a = {type}[8,1024] parameter(0)
  b = {type}[1024,8] parameter(1)
  ROOT d = {type}[8,8] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


def _dot_truth(type_name: str, a: np.ndarray, b: np.ndarray) -> tuple[Any, Any]:
    """The strict reference of `DOT` in `type_name` and its truth with the noise stage."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.hlo import evaluate_module
    from workbench.replay.hlo.shadow import widened_module
    from workbench.replay.judge.compare import Truth
    from workbench.replay.judge.error_bound import perturb, truth_of, with_noise

    module = parse_hlo_text(DOT.format(type=type_name))
    strict = evaluate_module(module, [a, b])
    shadow = widened_module(module)
    base = truth_of(strict, evaluate_module(shadow, [widen(a), widen(b)]),
                    evaluate_module(shadow, perturb([a, b])))
    truth: Truth = with_noise(base, noise_of(module, [widen(a), widen(b)]), strict)
    return strict, truth


def _accumulated_in_bf16(a: np.ndarray, b: np.ndarray, block: int) -> np.ndarray:
    """a @ b as a CPU kernel may run a bf16 dot: `block` products at a time summed in f32,
    the running sum kept in bf16."""
    import ml_dtypes

    left, right = a.astype(np.float32), b.astype(np.float32)
    total = np.zeros((left.shape[0], right.shape[1]), ml_dtypes.bfloat16)
    for start in range(0, left.shape[1], block):
        part = left[:, start:start + block] @ right[start:start + block]
        total = (total.astype(np.float32) + part).astype(ml_dtypes.bfloat16)
    return total


def test_a_bf16_dot_may_accumulate_in_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    """XLA CPU runs a dot that stays bf16 with bf16 partial sums: on a contraction whose
    running sum climbs to about 500 and comes back to about 10, that is far beyond one
    rounding of the exact sum, and legal. The noise stage accepts it; without the
    accumulation model it would not."""
    import ml_dtypes

    from workbench.replay.judge.compare import compare
    from workbench.replay.judge.noise import random_rounding

    rng = np.random.default_rng(5)
    magnitude = rng.uniform(0.5, 1.5, (8, 1024))
    a = (magnitude * np.repeat([1.0, -1.0], 512)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(0.5, 1.5, (1024, 8)).astype(ml_dtypes.bfloat16)
    legal = _accumulated_in_bf16(a, b, block=4)
    strict, truth = _dot_truth("bf16", a, b)
    assert compare(strict, legal, truth=truth).ok
    monkeypatch.setattr(random_rounding, "ACCUMULATION_BLOCKS", 1)
    strict, one_rounding = _dot_truth("bf16", a, b)
    assert not compare(strict, legal, truth=one_rounding).ok


def test_the_first_samples_spreads_serve_the_later_ones_within_their_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow dot's accumulation spread, estimated in the first sample, is kept for the
    later ones within `SPREAD_SHARE` of the memory limit (at most what the program's narrow
    dots make): then only the first sample estimates it. Past the budget, every sample
    estimates it again, and the stage's memory check counts what it keeps."""
    import ml_dtypes

    from workbench import sizes
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import budget, noisy_interpreter, run

    module = parse_hlo_text(DOT.format(type="bf16"))
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 1.5, (8, 1024)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(0.5, 1.5, (1024, 8)).astype(ml_dtypes.bfloat16)
    estimated: list[int] = []
    estimate = noisy_interpreter.accumulation_spread

    def counted(*args: Any) -> Any:
        estimated.append(1)
        return estimate(*args)

    monkeypatch.setattr(noisy_interpreter, "accumulation_spread", counted)
    arguments = [widen(a), widen(b)]
    plan = run.noise_plan(module, arguments)
    assert plan.spreads == 4 * 8 * 8  # the one dot's f32 spreads, far within the share
    kept = noise_of(module, arguments)
    assert len(estimated) == 1
    estimated.clear()
    monkeypatch.setattr(sizes, "memory_limit", lambda: 7 * 8 * 8 * 4)  # 224 of its 256 bytes
    assert run.noise_plan(module, arguments).spreads == budget.SPREAD_SHARE * 7 * 8 * 8 * 4
    again = noise_of(module, arguments)
    assert len(estimated) == SAMPLES  # each sample estimated it again
    # The same noise model either way: the later samples draw the kept spread's signs.
    assert np.all(again.high[0] - again.low[0] > 0) and np.all(kept.high[0] - kept.low[0] > 0)


def test_the_spreads_kept_fit_the_room_the_stage_leaves_but_never_less_than_before() -> None:
    """What the narrow dots' spreads may keep: what they make, within an eighth of the limit
    and the room the rest of the stage leaves; never less than the floor, so a stage that
    fit before spreads took a share of the limit fits still."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise.budget import SPREAD_FLOOR, spreads_budget

    big = parse_hlo_text(DOT.format(type="bf16").replace("[8,1024]", "[10000,1024]")
                         .replace("[1024,8]", "[1024,10000]").replace("[8,8]", "[10000,10000]"))
    declared = {(c.name, i.name): i for c in big.computations for i in c.instructions}
    made, gb = 4 * 10000 * 10000, 2**30
    assert spreads_budget(declared, 0, 8 * gb) == made  # 400 MB: within an eighth
    assert spreads_budget(declared, 0, 2 * gb) == gb // 4  # an eighth of 2 GB
    assert spreads_budget(declared, 8 * gb - 300 * 2**20, 8 * gb) == 300 * 2**20  # the room
    assert spreads_budget(declared, 8 * gb, 8 * gb) == SPREAD_FLOOR  # no room: the floor
    small = parse_hlo_text(DOT.format(type="bf16"))
    assert spreads_budget({(c.name, i.name): i for c in small.computations
                           for i in c.instructions}, 0, 8 * gb) == 4 * 8 * 8
    f32 = parse_hlo_text(DOT.format(type="f32"))
    assert spreads_budget({(c.name, i.name): i for c in f32.computations
                           for i in c.instructions}, 0, 8 * gb) == 0  # one rounding


def test_a_wrong_bf16_dot_is_still_caught() -> None:
    """Where the sum does not cancel, 1,024 roundings of the running sum move it by a few
    percent (the bound allows C times that): an element off by half its value is a
    mismatch."""
    import ml_dtypes

    from workbench.replay.judge.compare import compare

    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 1.5, (8, 1024)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(0.5, 1.5, (1024, 8)).astype(ml_dtypes.bfloat16)
    legal = _accumulated_in_bf16(a, b, block=4)
    strict, truth = _dot_truth("bf16", a, b)
    assert compare(strict, legal, truth=truth).ok
    wrong = legal.copy()
    wrong[3, 5] = ml_dtypes.bfloat16(float(legal[3, 5]) * 1.5)
    assert not compare(strict, wrong, truth=truth).ok


def test_an_f32_dot_keeps_one_rounding() -> None:
    """Only a dot declared narrower than f32 accumulates in its type: an f32 dot's noise is
    the few ulps of its own rounding, at every element."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 8)).astype(np.float32)
    from workbench.formats.hlo_text import parse_hlo_text

    module = parse_hlo_text(DOT.format(type="f32"))
    found = noise_of(module, [widen(a), widen(b)])
    exact = a.astype(np.float64) @ b.astype(np.float64)
    spread = np.maximum(found.high - exact, exact - found.low)
    assert np.all(spread <= 2 * np.finfo(np.float32).eps * np.abs(exact))


def adam_update(suffix: str = "", first: int = 0) -> str:
    """AdamW's first update of one bf16 gradient g = x * y - b, g / (|g| + eps), as HLO lines
    (parameters `first` to `first + 2`; names end in `suffix`; `epsilons` defined before)."""
    s = suffix
    return (f"  x{s} = bf16[4] parameter({first})\n  y{s} = bf16[4] parameter({first + 1})\n"
            f"  b{s} = bf16[4] parameter({first + 2})\n  a{s} = bf16[4] multiply(x{s}, y{s})\n"
            f"  g{s} = bf16[4] subtract(a{s}, b{s})\n  m{s} = f32[4] convert(g{s})\n"
            f"  magnitude{s} = f32[4] abs(m{s})\n"
            f"  denominator{s} = f32[4] add(magnitude{s}, epsilons)\n"
            f"  update{s} = f32[4] divide(m{s}, denominator{s})\n")


EPSILONS = "  eps = f32[] constant(1e-8)\n  epsilons = f32[4] broadcast(eps), dimensions={}\n"
ADAM_LIKE = ("HloModule adam_like\n\nENTRY main {\n" + EPSILONS + adam_update() + """\
  two = f32[] constant(2)
  twos = f32[4] broadcast(two), dimensions={}
  half = f32[4] divide(m, twos)
  e = f32[4] exponential(m)
  total = f32[] constant(4)
  totals = f32[4] broadcast(total), dimensions={}
  share = f32[4] divide(e, totals)
  ROOT r = (f32[4], f32[4], f32[4]) tuple(update, half, share)
}
""")


def test_the_split_sample_moves_a_gradient_within_noise_across_zero() -> None:
    """g = x * y - b is 2^-6 at element 0: rounding x * y to bf16 may move it by up to one bf16
    ulp (2^-7 there), so no random-rounding sample reaches zero, but the bound lets a legal
    g stray `REACH` times as far (real XLA's bf16 sums stray further than one rounding), and
    far from zero elsewhere. update = g / (|g| + eps) is +1 in every random-rounding sample
    there, so without the split sample nothing would show that real XLA may land on -1. The
    split sample moves g across where it is made, at element 0 only (the divide is steep
    there, not where g is far from zero), and never exp(g), which cannot be negative."""
    from workbench.formats.hlo_text import parse_hlo_text

    module = parse_hlo_text(ADAM_LIKE)
    x = np.array([1.0 + 2**-6, 1.0, 2.0, -3.0])
    y = np.ones(4)
    b = np.array([1.0, 0.5, 1.0, 3.0])
    found = noise_of(module, [x, y, b])
    update_low, update_high = found.low[0], found.high[0]
    assert update_high[0] == pytest.approx(1.0, abs=1e-4) and update_low[0] < -0.9  # either side
    assert np.all(update_high[1:] - update_low[1:] < 1e-6)  # decided elsewhere
    assert [(d.name, d.elements) for d in found.discontinuities if d.flipped] == [("update", 1)]
    # g moved where it is made, so g / 2 follows it at element 0 (a legal g, halved), and
    # keeps its side where g is far from zero.
    assert found.low[1][0] < 0 < found.high[1][0]
    assert np.all(np.sign(found.low[1][1:]) == np.sign(found.high[1][1:]))
    assert np.all(found.low[2] > 0)  # exp is never moved below zero


def test_without_the_split_sample_the_flip_is_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The case above with `REACH` 0 (the split sample moves nothing): the random-rounding
    samples alone keep update at +1, so the test above can fail."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import split_sample

    monkeypatch.setattr(split_sample, "REACH", 0.0)
    module = parse_hlo_text(ADAM_LIKE)
    x = np.array([1.0 + 2**-6, 1.0, 2.0, -3.0])
    found = noise_of(module, [x, np.ones(4), np.array([1.0, 0.5, 1.0, 3.0])])
    assert found.low[0][0] > 0.9


def test_a_gradient_whose_own_samples_stray_little_takes_its_arrays_reach(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """g = x * y - b is 2^-14 at element 0, made from values of about 2^-10: its own rounding
    noise is at most 2^-17, so four times its samples' half range never reaches zero. Its
    array's other elements, made from values of 1 to 3, stray about 2^-8: a value's reach is
    at least four times the array's median half range (a few samples of one element may stray
    little by chance), so the split sample moves it across zero, and only it."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import split_sample

    module = parse_hlo_text(ADAM_LIKE)
    x = np.array([2.0**-10 + 2.0**-14, 1.0, 2.0, -3.0])
    b = np.array([2.0**-10, 0.5, 1.0, 3.0])
    found = noise_of(module, [x, np.ones(4), b])
    assert found.low[0][0] < -0.9 and found.high[0][0] > 0.9
    assert np.all(found.high[0][1:] - found.low[0][1:] < 1e-6)
    monkeypatch.setattr(split_sample, "_typical_half", lambda half: 0.0)
    alone = noise_of(module, [x, np.ones(4), b])
    assert alone.low[0][0] > 0.9


STEPS = """HloModule steps

ENTRY main {
  x = bf16[4] parameter(0)
  y = bf16[4] parameter(1)
  a = bf16[4] multiply(x, y)
  f = bf16[4] floor(a)
  i = s32[4] convert(a)
  r = bf16[4] round-nearest-even(a)
  ROOT t = (bf16[4], s32[4], bf16[4]) tuple(f, i, r)
}
"""


def test_the_split_sample_steps_floor_convert_and_round_across(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """a = x * y is 3 + 2^-5 at element 0 (floor and truncation 3): rounding to bf16 moves it
    by at most one ulp of the bf16 type at 3 (0.024), so no random sample goes below 3, but
    the bound's reach does; 2.5 + 2^-5 at element 1 (round: 3), as near its step; far from
    any step at elements 2 and 3. With `REACH` 0 nothing steps across."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import split_sample

    module = parse_hlo_text(STEPS)
    x = np.array([3.0 + 2**-5, 2.5 + 2**-5, 5.25, -7.25])
    found = noise_of(module, [x, np.ones(4)])
    floor_low, floor_high = found.low[0], found.high[0]
    assert (floor_low[0], floor_high[0]) == (2.0, 3.0)
    assert np.array_equal(floor_low[2:], floor_high[2:])
    round_low, round_high = found.low[2], found.high[2]
    assert (round_low[1], round_high[1]) == (2.0, 3.0)
    assert np.array_equal(round_low[2:], round_high[2:])
    named = {d.name for d in found.discontinuities if d.flipped}
    assert {"f", "i", "r"} <= named
    monkeypatch.setattr(split_sample, "REACH", 0.0)
    alone = noise_of(module, [x, np.ones(4)])
    assert alone.low[0][0] == 3.0 and alone.high[2][1] == alone.low[2][1] == 3.0


TIES = """HloModule ties

ENTRY main {
  x = bf16[2,4] parameter(0)
  y = bf16[2,4] parameter(1)
  logits = bf16[2,4] multiply(x, y)
  best = (bf16[2,1], s32[2,1]) topk(logits), k=1, largest=true
  index = s32[2,1] get-tuple-element(best), index=1
  ROOT chosen = f32[2,1] convert(index)
}
"""


def test_the_split_sample_resolves_a_near_tie_of_top_k_the_other_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Row 0's two best logits are 3 and 3.0625: rounding each to bf16 moves it by at most
    0.024, so no random sample reorders them, but the bound's reach does; the chosen index,
    1, may legally be 0. Row 1 has no near tie. With `REACH` 0 nothing is reordered."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import split_sample

    module = parse_hlo_text(TIES)
    x = np.array([[3.0, 3.0625, 1.0, 0.0], [1.0, 5.0, 2.0, 0.0]])
    found = noise_of(module, [x, np.ones((2, 4))])
    near = pytest.approx  # the convert to f32 rounds too: by f32 ulps
    assert (found.low[0, 0], found.high[0, 0]) == (near(0.0, abs=1e-6), near(1.0))
    assert found.low[1, 0] == near(1.0) and found.high[1, 0] == near(1.0)
    assert [(d.name, d.elements) for d in found.discontinuities if d.flipped] == [("best", 1)]
    monkeypatch.setattr(split_sample, "REACH", 0.0)
    alone = noise_of(module, [x, np.ones((2, 4))])
    assert alone.low[0, 0] == near(1.0)


def test_what_the_split_sample_reads_is_kept_within_its_own_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The values a split reads are kept beyond `TRACKED_BYTES`, but not beyond
    `NEEDED_SHARE` of the memory limit: with no budget at all (and no room on disk either)
    nothing is kept, nothing is split, and the noise says so."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import budget
    from workbench.replay.processes import memory

    module = parse_hlo_text(ADAM_LIKE)
    arguments = [np.array([1.0 + 2**-6, 1.0, 2.0, -3.0]), np.ones(4),
                 np.array([1.0, 0.5, 1.0, 3.0])]
    monkeypatch.setattr(budget, "TRACKED_BYTES", 0)
    split = noise_of(module, arguments)
    assert split.low[0][0] < -0.9 and split.left_out is None  # the split reads beyond it
    monkeypatch.setattr(budget, "NEEDED_SHARE", 0.0)
    monkeypatch.setattr(memory, "disk_room", lambda: 0)
    unsplit = noise_of(module, arguments)
    assert unsplit.low[0][0] > 0.9
    assert unsplit.left_out is not None and "beyond its memory budget" in unsplit.left_out


TWO_UPDATES = ("HloModule two_updates\n\nENTRY main {\n" + EPSILONS + adam_update()
               + adam_update("2", 3)
               + "  ROOT r = (f32[4], f32[4]) tuple(update, update2)\n}\n")


def test_what_the_split_sample_reads_is_split_into_groups_that_fit_its_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two AdamW-like updates, each a cluster the split sample reads together (the divide and
    the values whose sign it follows). With a budget that holds one cluster but not both, the
    samples run once per cluster and each group's split sample moves its own: the same noise
    as with room for both, and nothing left out; with room for neither, both are left out.
    (Groups are what a disk without room for the later ones leaves: `test_..._on_disk`.)"""
    from workbench import sizes
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import budget, run, split_sample
    from workbench.replay.processes import memory

    monkeypatch.setattr(memory, "disk_room", lambda: 0)
    module = parse_hlo_text(TWO_UPDATES)
    # g = 1.5 bf16 ulps at element 0: no sample crosses zero, and the chance that eight
    # samples stay too close together for the split to reach it is below 1%.
    arguments = [np.array([1.0 + 1.5 * 2**-7, 1.0, 2.0, -3.0]), np.ones(4),
                 np.array([1.0, 0.5, 1.0, 3.0])] * 2
    whole = noise_of(module, arguments)
    assert whole.left_out is None
    assert sorted(d.name for d in whole.discontinuities if d.flipped) == ["update", "update2"]

    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = split_sample.steep_ancestors(declared, split_sample.non_negative(module))
    clusters = budget.needed_clusters(declared, ancestors)
    assert len(clusters) == 2
    one = max(budget.group_bytes(cluster, declared) for cluster in clusters)
    monkeypatch.setattr(budget, "TRACKED_BYTES", 0)
    monkeypatch.setattr(sizes, "memory_limit", lambda: int(one / budget.NEEDED_SHARE))
    assert len(budget.packed_groups(clusters, declared, one)) == 2
    ranges_made: list[Any] = []
    made: Any = run.ResultRange.__init__

    def counted(self: Any, *args: Any) -> None:
        ranges_made.append(self)
        made(self, *args)

    monkeypatch.setattr(run.ResultRange, "__init__", counted)
    told: list[tuple[str, int]] = []
    grouped = noise_of(module, arguments, tell=lambda label, left: told.append((label, left)))
    assert len(ranges_made) == 1  # the second group's samples are the first's: one range
    assert grouped.left_out is None
    # Each evaluation is told as it starts, with how many at most follow it.
    each = SAMPLES + 2  # the samples, the split sample, the domain sample
    assert told[0] == (f"sample 1 of {SAMPLES}, group 1 of 2", 2 * each - 1)
    assert told[SAMPLES] == ("split sample, group 1 of 2", 2 * each - SAMPLES - 1)
    assert (f"sample 1 of {SAMPLES}, group 2 of 2", each - 1) in told
    assert [left for _, left in told] == sorted((left for _, left in told), reverse=True)
    assert len(told) <= 2 * each and told[-1][1] >= 0
    for part in range(2):
        np.testing.assert_array_equal(grouped.low[part], whole.low[part])
        np.testing.assert_array_equal(grouped.high[part], whole.high[part])
    assert grouped.discontinuities == whole.discontinuities

    monkeypatch.setattr(sizes, "memory_limit", lambda: 0)
    starved = noise_of(module, arguments)
    assert starved.left_out is not None and starved.low[0][0] > 0.9 and starved.low[1][0] > 0.9


def _in_one_group(module: Any, arguments: list[np.ndarray], whole: Any) -> Any:
    """The noise of `module` on `arguments`, checked to run its samples once (no group is
    told), to leave nothing out and to hold the ranges of the result `whole` holds."""
    told: list[tuple[str, int]] = []
    noise = noise_of(module, arguments, tell=lambda label, left: told.append((label, left)))
    assert noise.left_out is None and not any("group" in label for label, _ in told)
    for index in range(2):
        np.testing.assert_array_equal(noise.low[index], whole.low[index])
        np.testing.assert_array_equal(noise.high[index], whole.high[index])
    return noise


def test_what_passes_the_budget_is_kept_on_disk_where_the_disk_has_room(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The two updates with a budget that holds one cluster: where the disk has room for the
    rest, the samples run once, the ranges of the values beyond the budget in files mapped
    from disk, and the noise is the one that room for both gives, bit for bit. Short of room
    on disk (the range of the result and `DISK_SPARE` besides), the groups run as before.
    With no budget at all, everything is on disk, and nothing is left out."""
    from workbench import sizes
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.error_bound import widen
    from workbench.replay.judge.noise import budget, recorder, result_range, run, split_sample
    from workbench.replay.processes import memory

    module = parse_hlo_text(TWO_UPDATES)
    arguments = [np.array([1.0 + 1.5 * 2**-7, 1.0, 2.0, -3.0]), np.ones(4),
                 np.array([1.0, 0.5, 1.0, 3.0])] * 2
    widened = [widen(a) for a in arguments]
    whole = noise_of(module, arguments)
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = split_sample.steep_ancestors(declared,
                                             split_sample.non_negative(module, widened))
    clusters = budget.needed_clusters(declared, ancestors)
    one = max(budget.group_bytes(cluster, declared) for cluster in clusters)
    monkeypatch.setattr(budget, "TRACKED_BYTES", 0)
    monkeypatch.setattr(sizes, "memory_limit", lambda: int(one / budget.NEEDED_SHARE))
    monkeypatch.setattr(recorder, "SMALLEST", 0)  # these ranges are bytes, not megabytes

    monkeypatch.setattr(memory, "disk_room", lambda: 2**40)
    plan = run.noise_plan(module, widened)
    assert plan.groups == [set().union(*clusters)] and plan.on_disk
    assert budget.group_bytes(plan.groups[0] - plan.on_disk, declared, plan.deciders) <= one
    part = run.sampled(plan, widened, 0, range(SAMPLES))
    on_disk = {key[:2] for key, (low, high) in part.ranges.items()
               if isinstance(low, np.memmap) and isinstance(high, np.memmap)}
    assert on_disk == {key for key in plan.on_disk if budget.group_bytes({key}, declared)}
    assert not any(isinstance(low, np.memmap) for key, (low, _) in part.ranges.items()
                   if key[:2] not in plan.on_disk)
    assert _in_one_group(module, arguments, whole).discontinuities == whole.discontinuities

    needs = (budget.group_bytes(plan.on_disk, declared, plan.deciders) + budget.DISK_SPARE
             + result_range.result_bytes(module.entry.root.shape))
    monkeypatch.setattr(memory, "disk_room", lambda: needs)
    assert len(run.noise_plan(module, widened).groups) == 1
    monkeypatch.setattr(memory, "disk_room", lambda: needs - 1)
    assert len(run.noise_plan(module, widened).groups) == 2

    monkeypatch.setattr(memory, "disk_room", lambda: 2**40)
    monkeypatch.setattr(sizes, "memory_limit", lambda: 0)
    _in_one_group(module, arguments, whole)


def test_a_value_past_the_budget_is_kept_on_disk_or_said_left_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A value the split sample reads that passes the recorder's budget (a loop's later
    trip, which the plan counts once) is kept on disk rather than left out; only where the
    disk has no room is it left out, and counted so."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import recorder
    from workbench.replay.processes import memory

    instruction = parse_hlo_text(ADAM_LIKE).entry.root
    value = np.linspace(-1.0, 1.0, 1000)
    monkeypatch.setattr(recorder, "SMALLEST", 0)
    kept = recorder.Recorder(needed={("main", instruction.name)}, needed_bytes=0)
    kept.see_float("main", instruction, value, 2.0**-24)
    low, high = kept.ranges[("main", instruction.name, 0)]
    assert isinstance(low, np.memmap) and isinstance(high, np.memmap) and kept.left_out == 0
    np.testing.assert_array_equal(low, value)

    monkeypatch.setattr(memory.DiskArena, "array", lambda self, shape, dtype: None)
    full = recorder.Recorder(needed={("main", instruction.name)}, needed_bytes=0)
    full.see_float("main", instruction, value, 2.0**-24)
    assert full.ranges == {} and full.left_out == 1


def test_the_groups_count_only_the_values_the_samples_record(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The split sample's groups are sized by what the samples keep: the range of each value
    an op rounds, none for the parameters and broadcasts it reads (which never round). A budget
    for the two updates' rounding values, short of all their declared values, holds both in
    one group, and nothing is left out: a GPT-2-size step's optimizer state had cut its
    groups twice as fine as they need be."""
    from workbench import sizes
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import budget, split_sample

    module = parse_hlo_text(TWO_UPDATES)
    arguments = [np.array([1.0 + 1.5 * 2**-7, 1.0, 2.0, -3.0]), np.ones(4),
                 np.array([1.0, 0.5, 1.0, 3.0])] * 2
    whole = noise_of(module, arguments)
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = split_sample.steep_ancestors(declared, split_sample.non_negative(module))
    clusters = budget.needed_clusters(declared, ancestors)
    rounding = sum(1 for cluster in clusters for key in cluster
                   if declared[key].opcode not in ("parameter", "broadcast"))
    assert rounding < sum(len(cluster) for cluster in clusters)  # the parameters are read
    both = budget.RANGE_BYTES * 4 * rounding
    monkeypatch.setattr(budget, "TRACKED_BYTES", 0)
    monkeypatch.setattr(sizes, "memory_limit", lambda: int(both / budget.NEEDED_SHARE) + 1)
    assert len(budget.packed_groups(clusters, declared, both)) == 1
    _in_one_group(module, arguments, whole)


SECOND_MOMENT = """HloModule jit_adam

ENTRY %main (g: f32[4], nu: f32[4], d: f32[4]) -> f32[4] {
  %g = f32[4]{0} parameter(0)
  %nu = f32[4]{0} parameter(1)
  %d = f32[4]{0} parameter(2)
  %square = f32[4]{0} multiply(%g, %g)
  %decay = f32[] constant(0.999)
  %decays = f32[4]{0} broadcast(%decay), dimensions={}
  %kept = f32[4]{0} multiply(%nu, %decays)
  %moment = f32[4]{0} add(%kept, %square)
  %n = bf16[] constant(48)
  %wide = f32[] convert(%n)
  %ns = f32[4]{0} broadcast(%wide), dimensions={}
  %corrected = f32[4]{0} divide(%moment, %ns)
  %shift = f32[] constant(-1)
  %shifts = f32[4]{0} broadcast(%shift), dimensions={}
  %shifted = f32[4]{0} add(%corrected, %shifts)
  %root = f32[4]{0} sqrt(%corrected)
  ROOT %update = f32[4]{0} divide(%d, %root)
}
"""


def test_constants_and_parameters_none_of_whose_values_is_negative_are_non_negative() -> None:
    """A second moment (nu * 0.999 + g * g) / n is never moved across zero by the split sample
    (its sqrt would be NaN, which no rounding makes): nu is an input of the execution, fixed,
    and none of its values is negative; n is a bf16 constant."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise import split_sample

    module = parse_hlo_text(SECOND_MOMENT)
    g, d = np.array([1.0, -2.0, 0.5, 3.0]), np.ones(4)
    found = {name for _, name in split_sample.non_negative(module, [g, np.zeros(4), d])}
    assert {"square", "decay", "kept", "moment", "n", "wide", "corrected", "root"} <= found
    assert "shift" not in found and "shifted" not in found and "g" not in found
    # An entry parameter with a negative value is not known to be non-negative, nor what it
    # makes; without the arguments no parameter is.
    negative = {name for _, name in split_sample.non_negative(
        module, [g, np.array([0, 0, -1e-9, 0]), d])}
    assert "nu" not in negative and "moment" not in negative and "square" in negative
    assert "nu" not in {name for _, name in split_sample.non_negative(module)}


SELECTED_SQRT = """HloModule jit_guarded

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %narrow = bf16[4]{0} convert(%x)
  %wide = f32[4]{0} convert(%narrow)
  %d = f32[4]{0} subtract(%wide, %y)
  %zero = f32[] constant(0)
  %zeros = f32[4]{0} broadcast(%zero), dimensions={}
  %positive = pred[4]{0} compare(%d, %zeros), direction=GT
  %root = f32[4]{0} sqrt(%d)
  ROOT %guarded = f32[4]{0} select(%positive, %root, %zeros)
}
"""


def test_the_split_samples_nans_are_not_legal() -> None:
    """`where(d > 0, sqrt(d), 0)` with d within the noise of zero: the split sample answers the
    compare the other way without moving d, so it takes sqrt of a negative d, a NaN no rounding
    makes (every random sample's compare and sqrt agree). That NaN is not a legal result."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.compare import compare
    from workbench.replay.judge.error_bound import Truth, with_noise

    module = parse_hlo_text(SELECTED_SQRT)
    x = np.array([1.0 - 2**-12, 4.0, 9.0, 1.0])
    y = np.array([1.0, 0.0, 0.0, 0.0])  # d[0] = -2^-12, within a bf16 ulp of zero
    noise = noise_of(module, [x, y])
    assert any(d.name == "positive" and d.flipped for d in noise.discontinuities)
    assert not np.any(noise.nan_seen)
    truth = with_noise(Truth(np.array([0.0, 2.0, 3.0, 0.0]), np.zeros(4)), noise,
                       np.array([0.0, 2.0, 3.0, 0.0], np.float32))
    expected = np.array([0.0, 2.0, 3.0, 0.0], np.float32)
    assert not compare(expected, np.array([np.nan, 2.0, 3.0, 0.0], np.float32),
                       truth=truth).ok


def test_ranges_kept_only_to_name_jumps_are_f32_what_the_split_reads_stays_f64() -> None:
    """A range kept to name a jump needs no more than f32 (a jump is a quarter of the array's
    magnitude): half the memory of f64, counted against `TRACKED_BYTES`. What the split
    sample reads, and the ranges of values declared wider than f32, keep the shadow's f64."""
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.judge.noise.recorder import Recorder

    module = parse_hlo_text(ADAM_LIKE)
    named, read = module.entry.instructions[:2]
    recorder = Recorder(needed={("main", read.name)}, needed_bytes=2**20)
    value = np.array([1.0 + 2**-40, -3.0])
    recorder.see_float("main", named, value, eps=2.0**-8)
    recorder.see_float("main", read, value, eps=2.0**-8)
    low, high = recorder.ranges[("main", named.name, 0)]
    assert low.dtype == high.dtype == np.float32
    low, high = recorder.ranges[("main", read.name, 0)]
    assert low.dtype == high.dtype == np.float64 and low[0] == 1.0 + 2**-40
    assert recorder.named_only == 2 * (2 * 4 + 1)
    assert recorder.tracked == recorder.named_only + 2 * (2 * 8 + 1)
    wide = Recorder()
    wide.see_float("main", named, value, eps=2.0**-52)
    assert wide.ranges[("main", named.name, 0)][0].dtype == np.float64

    recorder.sample = 1
    recorder.occurrences.clear()
    recorder.see_float("main", named, np.array([1.5, -3.5]), eps=2.0**-8)
    low, high = recorder.ranges[("main", named.name, 0)]
    assert low.tolist() == [1.0, -3.5] and high.tolist() == [1.5, -3.0]

    scalar = Recorder()  # an op may give a numpy scalar: its range is still an array
    scalar.see_float("main", named, np.float64(2.0), eps=2.0**-8)
    scalar.sample = 1
    scalar.occurrences.clear()
    scalar.see_float("main", named, np.float64(1.0), eps=2.0**-8)
    low, high = scalar.ranges[("main", named.name, 0)]
    assert (float(low), float(high)) == (1.0, 2.0)


BATCH_NORM_BF16 = """HloModule m

ENTRY main {
  x = bf16[4,2] parameter(0)
  scale = bf16[2] parameter(1)
  offset = bf16[2] parameter(2)
  t = (bf16[4,2], bf16[2], bf16[2]) batch-norm-training(x, scale, offset), epsilon=1e-05,
      feature_index=1
  ROOT y = bf16[4,2] get-tuple-element(t), index=0
}
"""


def test_batch_norm_results_carry_the_rounding_of_their_type() -> None:
    """batch-norm-training rounds each result to bf16 (XLA expands it into reductions and
    elementwise ops): the samples move its normalized values by up to bf16's eps."""
    from workbench.formats.hlo_text import parse_hlo_text

    module = parse_hlo_text(BATCH_NORM_BF16)
    x = np.array([[1.0, 2.0], [3.0, 5.0], [-2.0, 0.5], [7.0, -1.0]])
    noise = noise_of(module, [x, np.ones(2), np.zeros(2)])
    spread = noise.high - noise.low
    middle = np.abs(noise.high + noise.low) / 2
    assert np.all(spread > 0)
    assert np.all(spread <= 2 * 2 ** -7 * middle * 1.01)  # within bf16's eps (2^-7) each way

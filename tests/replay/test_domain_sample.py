"""A NaN where rounding may legally land a value below a domain boundary (`sqrt` of AdamW's
second moment within its noise of 0) is legal, even where no random sample went there: the
domain sample moves such values across zero where they are made (`noise/split_sample.py`).

`gpt_adamw_mini` is a real XLA CPU dump (JAX 0.12, optax AdamW, bf16 compute). Its inputs
here are the recorded ones with the second moment `nu` set where `float-normalization-bf16`
computes a gradient whose square is below the truth's and below every random sample's: there
`nu` cancels `g * g * (1 - b2)` halfway between the step's and the lowest legal value, so the
new second moment is positive in the truth and in every random sample and negative in that
step, whose `sqrt` is NaN. Fake data drawn from N(0, 1), with `nu` often negative, did the
same at a few elements of a large model: the 8-layer GPT step of `benchmarks/model_size.py`
with seed 1 was judged a mismatch at `float-normalization-bf16`, 12 elements NaN where the
truth is finite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.planting import plant
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.loader import load_step_hlo
from workbench.replay.bisect import bisect_replay
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import widened_module
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.error_bound import widen
from workbench.replay.judge.noise.run import noise_of
from workbench.replay.judge.noise.split_sample import (
    non_negative,
    steep_ancestors,
    undefined_below_zero,
)
from workbench.replay.steps import Kind, open_replay

GPT = Path(__file__).parents[1] / "data" / "noise" / "gpt_adamw_mini"
MODULE = "module_0022"
NU = range(27, 40)  # the state's second moments, among the arguments and among the results
B2 = float(np.float32(0.999))  # optax's default second-moment decay, as the program holds it
STEP = "0008 float-normalization-bf16"


def cancelling_inputs(folder: Path) -> tuple[Path, ...]:
    """The recorded arguments (where `nu` is 0, so each new second moment is `g * g * (1 -
    b2)`) with `nu` set, where the step's new second moment is below both the truth's and the
    random samples' lowest, to cancel halfway between the step's and that; 0 elsewhere."""
    module = next(m for m in scan(GPT).modules if m.key == MODULE)
    with open_replay(GPT, module, module.executions[0]) as replay:
        arguments = list(replay.inputs.arguments)
        steps = replay.steps
    reference = load_step_hlo(GPT, steps[0])
    step = next(s for s in steps if s.label == STEP)
    wide = [widen(argument) for argument in arguments]
    value = evaluate_module(load_step_hlo(GPT, step), arguments)
    truth = evaluate_module(widened_module(reference), wide)
    noise = noise_of(reference, wide)
    assert isinstance(value, tuple) and isinstance(truth, tuple)
    files = []
    for number, argument in enumerate(arguments):
        if number in NU:
            ours, true, lowest = (np.asarray(x[number], np.float64)
                                  for x in (value, truth, noise.low))
            legal = np.fmin(lowest, true)
            below = (ours < legal) & (true > 0)
            argument = np.where(below, -(ours + legal) / 2 / B2, 0.0).astype(np.float32)
        np.save(folder / f"arg{number}.npy", np.asarray(argument))
        files.append(folder / f"arg{number}.npy")
    return tuple(files)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    return cancelling_inputs(tmp_path_factory.mktemp("inputs"))


def test_a_nan_within_noise_of_a_domain_boundary_is_legal(inputs: tuple[Path, ...]) -> None:
    module = next(m for m in scan(GPT).modules if m.key == MODULE)
    with open_replay(GPT, module, spec=InputSpec(npy=inputs), keep_values=True) as replay:
        results = replay.run()
        reference = replay.reference_value
    step = next(r for r in results if r.step.label == STEP)
    assert isinstance(step.value, tuple) and isinstance(reference, tuple)
    # the case: parameters NaN in the step where the reference is finite
    nan_where_finite = sum(int(np.count_nonzero(np.isnan(np.asarray(ours))
                                                & np.isfinite(np.asarray(theirs))))
                           for ours, theirs in zip(step.value[:13], reference[:13], strict=True))
    assert nan_where_finite > 0
    assert [r.kind for r in results] == [Kind.OK] * len(results), [r.status for r in results]
    assert step.comparison is not None
    moved = [d for d in step.comparison.widened_by if d.opcode == "sqrt"]
    assert moved and all(d.flipped and d.op_name == "jit(step)/sqrt" for d in moved)


@pytest.mark.parametrize("from_step", [8, 9999])
def test_a_planted_bug_beside_the_boundary_is_still_named(
        from_step: int, inputs: tuple[Path, ...], tmp_path: Path) -> None:
    """exp -> expm1 (the softmax's) at the precision change or only in the last step, on the
    same inputs: named at its step."""
    planted = tmp_path / "gpt"
    assert plant(GPT, planted, MODULE, from_step, "exponential", "exponential-minus-one")
    module = next(m for m in scan(planted).modules if m.key == MODULE)
    with open_replay(planted, module, spec=InputSpec(npy=inputs)) as replay:
        verdict = bisect_replay(replay)
    assert verdict.status == Kind.MISMATCH
    assert verdict.culprit is not None
    assert verdict.culprit.step.xla_step == (None if from_step == 9999 else from_step)


DOMAINS = """HloModule domains

ENTRY main {
  v = f32[4] parameter(0)
  g = f32[4] parameter(1)
  square = f32[4] multiply(g, g)
  cancels = f32[4] add(v, square)
  scaled = f32[4] multiply(cancels, cancels)
  half = f32[] constant(0.5)
  halves = f32[4] broadcast(half), dimensions={}
  two = f32[] constant(2)
  twos = f32[4] broadcast(two), dimensions={}
  root = f32[4] sqrt(cancels)
  fractional = f32[4] power(cancels, halves)
  integral = f32[4] power(scaled, twos)
  ROOT out = (f32[4], f32[4], f32[4]) tuple(root, fractional, integral)
}
"""


def test_the_values_a_domain_depends_on_are_the_sums_before_it() -> None:
    """sqrt and a power with exponent 0.5 depend on the sign of the sum that makes their
    operand; a power with exponent 2 does not; a product (g * g) is never moved."""
    module = parse_hlo_text(DOMAINS)
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    entry = module.entry_name
    ancestors = steep_ancestors(declared, non_negative(module))
    assert ancestors == {(entry, "cancels"): [(entry, "root"), (entry, "fractional")]}
    assert not undefined_below_zero(declared, entry, declared[(entry, "integral")])


def test_a_result_only_the_noise_stage_could_explain_is_not_judged_when_it_does_not_fit(
        inputs: tuple[Path, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a memory limit the f64 truth fits (about 0.6 MB here) but the noise stage does
    not (about 13 MB), the NaNs the noise stage shows legal are not called a mismatch: the
    step is not judged, saying what the stage needs and how to raise the limit."""
    from workbench.replay.processes import memory

    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, str(4 * 2**20))
    module = next(m for m in scan(GPT).modules if m.key == MODULE)
    with open_replay(GPT, module, spec=InputSpec(npy=inputs)) as replay:
        results = replay.run()
        noise_evaluations = replay.noise_evaluations
    step = next(r for r in results if r.step.label == STEP)
    assert noise_evaluations == 1
    assert step.kind == Kind.ERROR, step.status
    assert step.status.startswith("error: not judged: ")
    assert "random-rounding stage" in step.status and "--memory-limit" in step.status
    assert Kind.MISMATCH not in {r.kind for r in results}
    with open_replay(GPT, module, spec=InputSpec(npy=inputs)) as replay:
        verdict = bisect_replay(replay)
    assert verdict.status == Kind.ERROR and verdict.culprit is None

"""A computed value never has a bound of zero, even where its f64 truth is not finite.

`adamw_undefined_truth` is a real XLA CPU dump (JAX 0.12, optax) of one AdamW step of a bf16
layer-norm scale. Its second moment `nu * b2 + g * g * (1 - b2)` is fed a `nu` that cancels
it to within rounding (as fake data drawn from N(0, 1) did): where f64 makes
it negative, the truth `sqrt(...)` is NaN while the f32 reference is finite. The samples with
random rounding then decide the truth; where one sample (or none) was finite, their range had
no width, and the bound of the reference's finite value was 0 ("error 0.00593 > bound 0, infx"
on the GPU GPT step of the corpus).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.index import scan
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.compare import NOISE
from workbench.replay.steps import Kind, open_replay

DUMP = Path(__file__).parents[1] / "data" / "noise" / "adamw_undefined_truth"
B2 = np.float32(0.999)  # optax's default second-moment decay
NU = 3  # the state's `nu` among the arguments, and the new `nu` among the results


@pytest.fixture
def cancelling_inputs(tmp_path: Path) -> tuple[Path, ...]:
    """The snapshot's arguments with `nu` set to cancel the new second moment's `g * g` term:
    `-nu_new / b2`, where `nu_new` is the step's own on the recorded inputs (`nu` = 0)."""
    module = next(m for m in scan(DUMP).modules if m.name == "jit_step")
    with open_replay(DUMP, module, module.executions[0]) as replay:
        arguments = list(replay.inputs.arguments)
        reference = replay.reference_value
    assert isinstance(reference, tuple)
    arguments[NU] = (-np.asarray(reference[NU]) / B2).astype(np.float32)
    files = []
    for number, argument in enumerate(arguments):
        np.save(tmp_path / f"arg{number}.npy", np.asarray(argument))
        files.append(tmp_path / f"arg{number}.npy")
    return tuple(files)


def test_a_finite_reference_where_the_truth_is_nan_has_a_bound(
        cancelling_inputs: tuple[Path, ...]) -> None:
    module = next(m for m in scan(DUMP).modules if m.name == "jit_step")
    with open_replay(DUMP, module, spec=InputSpec(npy=cancelling_inputs)) as replay:
        reference = replay.reference_value
        base = replay.truth(True)
        truth = replay.truth(NOISE)
        results = replay.run()
    assert isinstance(reference, tuple) and base is not None and truth is not None
    parameters = np.asarray(reference[0], np.float64)
    undefined = np.isnan(np.asarray(base.value[0])) & np.isfinite(parameters)
    assert undefined.sum() > 10  # the case this is about: f64 says NaN, f32 a number
    for value, bound in zip(reference, truth.bound, strict=True):
        if bound is None:
            continue  # an integer output
        value = np.asarray(value, np.float64)
        computed = np.isfinite(value) & (value != 0)
        assert not np.any(computed & (np.asarray(bound) == 0))
    # Where the truth was undefined, the reference's own value is within its bound.
    bound = np.asarray(truth.bound[0])[undefined]
    assert np.all(np.abs(parameters[undefined] - np.asarray(truth.value[0])[undefined])
                  <= bound)
    assert [r.kind for r in results] == [Kind.OK] * len(results)

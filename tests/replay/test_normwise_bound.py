"""The bound of an element is what its computation can legally do, whatever its magnitude.

A factorization (here LAPACK's `cgees`, the complex Schur form of JAX's `testSchur`, a real
XLA CPU dump) is accurate norm-wise: a small entry of the Schur form carries the rounding of
the large ones beside it. Its outputs' absolute term is their array's largest spread, where an
element-wise op's is that of the elements of its own magnitude (`error_bound._absolute`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.index import scan
from workbench.loader import load_step_hlo
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import shadow_module
from workbench.replay.judge.error_bound import perturb, widen
from workbench.replay.steps import open_replay

DATA = Path(__file__).parents[1] / "data"
SCHUR = DATA / "normwise" / "schur_c64_100"
ACTIVATIONS = DATA / "lowp" / "activations_bf16_f32_out"


def test_the_outputs_of_a_lapack_call_are_norm_wise() -> None:
    from workbench.replay.hlo.linalg import normwise_outputs

    (module,) = [m for m in scan(SCHUR).modules if m.executions]
    assert normwise_outputs(load_step_hlo(SCHUR, module.ir_steps("hlo")[0])) == (True, True)
    elementwise = next(m for m in scan(ACTIVATIONS).modules if m.executions)
    reference = load_step_hlo(ACTIVATIONS, elementwise.ir_steps("hlo")[0])
    assert normwise_outputs(reference) == (False, False, False)


def test_a_small_entry_of_a_schur_form_is_judged_by_its_matrix_rounding() -> None:
    """Every element's bound covers the largest spread of its array (how far the strict
    reference and the truth on perturbed inputs stray from the truth): the small entries
    were held to the spreads of entries of their own magnitude, and a recording whose
    off-diagonal entry of 0.0072 was 0.0144 off (its bound 0.0113) was called a mismatch."""
    (module,) = [m for m in scan(SCHUR).modules if m.executions]
    with open_replay(SCHUR, module, module.executions[0]) as replay:
        strict, truth = replay.reference_value, replay.truth(True)
        arguments = replay.inputs.arguments
    assert isinstance(strict, tuple) and truth is not None
    shadow = shadow_module(load_step_hlo(SCHUR, module.ir_steps("hlo")[0]))
    exact = evaluate_module(shadow, [widen(a) for a in arguments])
    moved = evaluate_module(shadow, perturb(arguments))
    assert isinstance(exact, tuple) and isinstance(moved, tuple)
    for reference, value, perturbed, bound in zip(strict, exact, moved, truth.bound,
                                                  strict=True):
        value = np.asarray(value)
        spread = np.maximum(np.abs(np.asarray(reference).astype(value.dtype) - value),
                            np.abs(np.asarray(perturbed) - value))
        assert np.all(np.asarray(bound) >= spread.max())

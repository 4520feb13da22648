"""MLIR replay: interpret printed MLIR (StableHLO down to loops) with xDSL, pass by pass.

`evaluate_mlir(text, arguments, entry_point=None)` runs one module; `backend` plugs it into the
replay, bisect and triage machinery. Importing this package does not import xDSL; the first
evaluation does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from workbench.hlo_ir import LiteralValue


def evaluate_mlir(
    text: str, arguments: Sequence[np.ndarray], entry_point: str | None = None
) -> LiteralValue:
    """The result of the module's entry function on `arguments` (see `evaluate.evaluate_mlir`)."""
    from workbench.replay.mlir.evaluate import evaluate_mlir as evaluate

    return evaluate(text, arguments, entry_point)


__all__ = ["evaluate_mlir"]

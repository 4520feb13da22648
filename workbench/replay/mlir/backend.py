"""The MLIR backend of the replay machinery: replay, bisect, triage and the TUI on MLIR steps.

It replays a module's MLIR steps, whatever file they come from: entries of an mlir-trace
proto, dumps in a print-ir log (`Source` byte ranges), files of an IR tree folder, a lone
`.mlir` file, or the `module.mlir` JAX hands to XLA (a cross-check of the HLO evaluator on the
same snapshot). The first step is the reference. A print-ir log that also prints the IR
*before* each pass repeats every state twice; only the first "before" dump is kept (the
pipeline's input, the best reference there is), the others are the previous "after" again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.hlo_ir import LiteralValue
from workbench.model import Execution, Module, Step
from workbench.replay.errors import EvaluationError, MlirParseError, Unsupported
from workbench.replay.inputs import ParamSpec


def replayable_steps(module: Module) -> list[Step]:
    steps = [step for step in module.ir_steps("mlir") if step.text is not None]
    return [step for i, step in enumerate(steps) if i == 0 or step.kind != "before-pass"]


@dataclass
class MlirBackend:
    """Replays MLIR steps with the xDSL-based interpreter (`evaluate_mlir`)."""

    root: Path
    module: Module
    name: str = "mlir"
    entry_point: str | None = None

    def steps(self) -> list[Step]:
        return replayable_steps(self.module)

    def text(self, step: Step) -> str:
        from workbench.loader import read_text

        if step.text is None:
            raise EvaluationError(f"step {step.index} has no text")
        return read_text(self.root, step.text)

    def parameter_specs(self) -> list[ParamSpec] | None:
        """The entry function's parameter types, read from the first step's IR; None when
        they cannot be known (a dynamic size, an unsupported op, no entry function). Raises
        `ReadError` naming the step's file when that IR cannot be read or parsed, as the HLO
        backend does: "the types are unknown" would hide which file is damaged."""
        from workbench.loader import ReadError
        from workbench.replay.mlir.evaluate import entry_function
        from workbench.replay.mlir.parse import parse_module
        from workbench.replay.mlir.values import is_shaped, value_dtype

        steps = self.steps()
        if not steps:
            return None
        step = steps[0]
        try:
            module, _ = parse_module(self.text(step))
        except MlirParseError as error:
            file = step.text.file if step.text is not None else step.label
            raise ReadError(file, f"the IR of step {step.index} ({step.pass_name}) cannot be "
                                  f"parsed: {error}") from None
        except Unsupported:
            return None
        try:
            function = entry_function(module, self.entry_point)
            specs: list[ParamSpec] = []
            for type_ in function.function_type.inputs.data:
                dims = tuple(type_.get_shape()) if is_shaped(type_) else ()
                if any(size < 0 for size in dims):
                    return None
                specs.append((value_dtype(type_), dims))
            return specs
        except (EvaluationError, Unsupported):
            return None

    def non_negative_parameters(self) -> frozenset[int]:
        """None: the MLIR evaluator's fake data is N(0, 1) for every float parameter (the
        sign flow is followed in HLO only)."""
        return frozenset()

    def recorded(self, execution: Execution) -> tuple[list[LiteralValue], LiteralValue | None]:
        from workbench.loader import load_snapshot

        snapshot = load_snapshot(self.root, execution)
        return list(snapshot.arguments), snapshot.result

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        from workbench.replay.mlir.evaluate import evaluate_mlir

        arrays = []
        for number, argument in enumerate(arguments):
            if isinstance(argument, tuple):
                raise Unsupported(f"tuple argument {number} (MLIR functions take arrays)")
            arrays.append(np.asarray(argument))
        return evaluate_mlir(self.text(step), arrays, self.entry_point)

    def evaluate_shadow(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """The result of `step` with bf16/f16/f32 computed in f64 (see `shadow.py`), on
        arguments already widened so."""
        from workbench.replay.mlir.evaluate import evaluate_mlir
        from workbench.replay.mlir.shadow import shadow_text

        arrays = []
        for number, argument in enumerate(arguments):
            if isinstance(argument, tuple):
                raise Unsupported(f"tuple argument {number} (MLIR functions take arrays)")
            arrays.append(np.asarray(argument))
        return evaluate_mlir(shadow_text(self.text(step)), arrays, self.entry_point)


def open_mlir_backend(root: Path, module: Module) -> MlirBackend | None:
    return MlirBackend(root, module) if replayable_steps(module) else None

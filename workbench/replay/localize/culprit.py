"""Localize a culprit whatever replays it: HLO steps (`localizer.py`, instructions) or MLIR
steps (`mlir.py`, op results); the commands, triage and the app call these."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from workbench.model import Step
from workbench.replay.judge.culprit import Culprit, CulpritInstruction
from workbench.replay.localize.localizer import localize_steps
from workbench.replay.localize.result import Localization, LocalizeError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.hlo_ir import LiteralValue
    from workbench.replay.backends import Backend
    from workbench.replay.bisect import Verdict
    from workbench.replay.steps import Replay


def localize_backend_steps(backend: Backend, before: Step, after: Step,
                           arguments: Sequence[LiteralValue]) -> Localization:
    """Localize between two steps a replay backend evaluates: HLO (instructions, with the
    reducer's data) or MLIR (op results, `mlir.py`). Raises `LocalizeError`."""
    from workbench.replay.backends import HloBackend
    from workbench.replay.mlir.backend import MlirBackend

    if isinstance(backend, HloBackend):
        if any(backend.per_device(step, arguments) for step in (before, after)):
            from workbench.replay.localize.partitioned import localize_partitioned

            return localize_partitioned(backend, before, after, arguments)
        return localize_steps(backend.root, before, after, arguments)
    if isinstance(backend, MlirBackend):
        from workbench.replay.localize.mlir import localize_mlir  # imports xDSL: MLIR only

        texts = backend.text(before), backend.text(after)
        return localize_mlir(*texts, arguments, before, after, backend.entry_point)
    raise LocalizeError(f"the {backend.name} backend's steps cannot be localized")


def localize_verdict(replay: Replay, verdict: Verdict) -> Localization:
    """Localize a bisection's culprit: the step before it against the culprit step, on the
    replay's inputs. Raises `LocalizeError` (no culprit, cannot evaluate)."""
    if verdict.culprit is None:
        raise LocalizeError("no culprit step to localize: " + verdict.detail)
    if verdict.culprit.comparison is None:  # it did not finish: its loop is named already
        raise LocalizeError(f"no values to compare: the culprit step "
                            f"{verdict.culprit.outcome.reason}")
    position = verdict.culprit.position
    return localize_backend_steps(replay.backend, replay.steps[position - 1],
                                  replay.steps[position], replay.inputs.arguments)


def localize_or_say_why(backend: Backend, before: Step, after: Step,
                        arguments: Sequence[LiteralValue]) -> Localization | str:
    """`localize_backend_steps`, with a `LocalizeError` returned as its message: what a
    worker process runs for the TUI (an error crosses back as a value, not a traceback)."""
    try:
        return localize_backend_steps(backend, before, after, arguments)
    except LocalizeError as error:
        return str(error)


def localized_culprit(culprit: Culprit, replay: Replay, verdict: Verdict) -> Culprit:
    """`culprit` with what `--localize` adds: its instruction, or why none is named."""
    try:
        return with_instruction(culprit, localize_verdict(replay, verdict))
    except LocalizeError as error:
        return with_instruction(culprit, str(error))


def with_instruction(culprit: Culprit, localization: Localization | str) -> Culprit:
    """`culprit` localized: the instruction `localization` found, or why there is none (its
    explanation, or the error that stopped it)."""
    if isinstance(localization, str):
        return replace(culprit, localized=True, instruction_note=localization)
    found, comparison = localization.instruction, localization.comparison
    if found is None:
        return replace(culprit, localized=True, instruction_note=localization.explanation)
    bound = None if comparison is None or comparison.bound is None else comparison.bound.bound
    instruction = CulpritInstruction(
        found.name, found.computation, found.opcode, found.op_name, found.source,
        None if comparison is None else float(comparison.max_abs_error),
        None if bound is None else float(bound), localization.partitions, found.inside,
        found.metadata_from)
    return replace(culprit, localized=True, instruction=instruction)

"""Localize a culprit whatever replays it: HLO steps (`localize.py`, instructions) or MLIR
steps (`localize_mlir.py`, op results); the commands, triage and the app call these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.model import Step
from workbench.replay.localize import Localization, LocalizeError, localize_steps
from workbench.replay.localize_mlir import localize_mlir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.hlo_ir import LiteralValue
    from workbench.replay.backends import Backend
    from workbench.replay.bisect import Verdict
    from workbench.replay.steps import Replay


def localize_backend_steps(backend: Backend, before: Step, after: Step,
                           arguments: Sequence[LiteralValue]) -> Localization:
    """Localize between two steps a replay backend evaluates: HLO (instructions, with the
    reducer's data) or MLIR (op results, `localize_mlir.py`). Raises `LocalizeError`."""
    if backend.name == "hlo":
        if any(backend.per_device(step, arguments)  # type: ignore[attr-defined]
               for step in (before, after)):
            from workbench.replay.localize_partitioned import localize_partitioned

            return localize_partitioned(backend, before, after,  # type: ignore[arg-type]
                                        arguments)
        return localize_steps(backend.root, before, after, arguments)
    if backend.name == "mlir":
        texts = backend.text(before), backend.text(after)  # type: ignore[attr-defined]
        return localize_mlir(*texts, arguments, before, after,
                             backend.entry_point)  # type: ignore[attr-defined]
    raise LocalizeError(f"the {backend.name} backend's steps cannot be localized")


def localize_verdict(replay: Replay, verdict: Verdict) -> Localization:
    """Localize a bisection's culprit: the step before it against the culprit step, on the
    replay's inputs. Raises `LocalizeError` (no culprit, cannot evaluate)."""
    if verdict.culprit is None:
        raise LocalizeError("no culprit step to localize: " + verdict.detail)
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


def culprit_instruction(replay: Replay, verdict: Verdict) -> dict[str, Any]:
    """What `--localize` adds to a culprit (see `json_shapes.localized_culprit_json`)."""
    from workbench.output.json_shapes import localized_culprit_json

    try:
        return localized_culprit_json(localize_verdict(replay, verdict))
    except LocalizeError as error:
        return localized_culprit_json(str(error))

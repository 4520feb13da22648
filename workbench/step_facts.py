"""What a timeline shows of each step: its IR statistics and whether it changed the IR.

Both live in the store of derived facts (`workbench.facts`), keyed by the files they were
made from, so the app keeps no copy of its own: a step is counted and compared once while its
files stay the same, whichever pane (or command) asked first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from workbench.diff.steps import iter_changed, known_changed
from workbench.model import Module, Step
from workbench.sources import ReadError
from workbench.stats import IrStats, known_step_stats, step_stats


@dataclass(frozen=True)
class StepFacts:
    """A step's statistics (or why they are missing; None until counted) and whether it
    differs from the IR before it (None until known, and for steps with nothing to compare)."""

    stats: IrStats | ReadError | None = None
    changed: bool | None = None


def known_facts(root: Path, step: Step) -> StepFacts:
    """What is known of `step` now, without reading any file (for drawing)."""
    return StepFacts(known_step_stats(root, step), known_changed(root, step))


def all_known(root: Path, module: Module) -> bool:
    """Whether every step's statistics and changed flag (after the first) are known."""
    return all(known_step_stats(root, s) is not None and known_changed(root, s) is not None
               for s in module.steps[1:])


def compute_facts(root: Path, module: Module) -> Iterator[Step]:
    """Count and compare every step of `module`, yielding each step once its facts are in
    the store (a UI streams them into its timeline; stop iterating to cancel)."""
    for step, _changed in iter_changed(root, module):
        with suppress(ReadError):  # the reason is kept in the store
            step_stats(root, step)
        yield step

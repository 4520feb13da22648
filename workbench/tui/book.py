"""What the app has learned about steps and modules so far: replay results, IR statistics and
changed flags, kept across live re-indexing.

Model objects are rebuilt on every live update, so nothing is keyed by object: modules by
their key, steps by where their IR lives (`step_key`), which stays the same when files are
added around them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.model import Step
from workbench.sources import ReadError
from workbench.stats import IrStats
from workbench.tui.status import NOT_REPLAYED, Status


def step_key(step: Step) -> str:
    """A step's identity across re-indexing: its IR's file, byte offset or container entry."""
    source = step.text or step.proto
    if source is None:
        return f"#{step.index}"
    entry = "" if source.entry is None else f"#{source.entry}"
    return f"{source.file}@{source.start}{entry}"


@dataclass
class StepFacts:
    """Facts about one step's IR: its statistics (or why they are missing) and whether it
    differs from the step before it (None until known)."""

    stats: IrStats | ReadError | None = None
    changed: bool | None = None


@dataclass
class Book:
    modules: dict[str, Status] = field(default_factory=dict)
    steps: dict[tuple[str, str], Status] = field(default_factory=dict)
    facts: dict[str, StepFacts] = field(default_factory=dict)

    def module_status(self, module_key: str) -> Status:
        return self.modules.get(module_key, NOT_REPLAYED)

    def set_module_status(self, module_key: str, status: Status) -> None:
        self.modules[module_key] = status

    def step_status(self, module_key: str, step: Step) -> Status:
        return self.steps.get((module_key, step_key(step)), NOT_REPLAYED)

    def set_step_status(self, module_key: str, step: Step, status: Status) -> None:
        self.steps[(module_key, step_key(step))] = status

    def clear_module(self, module_key: str) -> None:
        """Forget a module's replay results (before it is replayed again)."""
        self.modules.pop(module_key, None)
        for key in [k for k in self.steps if k[0] == module_key]:
            del self.steps[key]

    def step_facts(self, step: Step) -> StepFacts:
        return self.facts.setdefault(step_key(step), StepFacts())

    def forget_files(self, files: frozenset[str]) -> None:
        """Files were rewritten or deleted: what was learned from them is stale."""
        if not files:
            return
        for key in [k for k in self.facts if k.split("@", 1)[0] in files]:
            del self.facts[key]

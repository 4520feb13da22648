"""What the app has learned about steps and modules so far: replay results, kept across live
re-indexing. (IR statistics and changed flags are derived facts of the files: they live in
`workbench.facts`, keyed by the files themselves.)

Model objects are rebuilt on every live update, so nothing is keyed by object: modules by
their key, steps by where their IR lives (`step_key`), which stays the same when files are
added around them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.model import Step
from workbench.tui.status import NOT_REPLAYED, Status


def step_key(step: Step) -> str:
    """A step's identity across re-indexing: its IR's file, byte offset or container entry."""
    source = step.text or step.proto
    if source is None:
        return f"#{step.index}"
    entry = "" if source.entry is None else f"#{source.entry}"
    return f"{source.file}@{source.start}{entry}"


@dataclass
class Book:
    modules: dict[str, Status] = field(default_factory=dict)
    steps: dict[tuple[str, str], Status] = field(default_factory=dict)

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

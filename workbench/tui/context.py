"""What a pane may know of the app: the selection it owns and the narrow `PaneContext`.

Panes are typed against `PaneContext`, not the app class, so a pane (or a test) depends on
the few things it reads and the few requests it makes, and the app can change around them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.message import Message

    from workbench.model import Dump, Execution, Module, Step
    from workbench.step_facts import StepFacts
    from workbench.tui.book import Book
    from workbench.tui.jobs import Jobs


@dataclass
class Selection:
    """What the user has selected, owned by the app: the module (Modules pane), the step
    (Timeline cursor) and the execution (Executions cursor, None when the module has none)."""

    module: Module | None = None
    step: Step | None = None
    execution: Execution | None = None

    def execution_or_first(self) -> Execution | None:
        """The execution to run: the selected one, else the module's first."""
        if self.execution is not None or self.module is None:
            return self.execution
        return self.module.executions[0] if self.module.executions else None


class PaneContext(Protocol):
    """What panes read from the app and ask of it."""

    dump: Dump
    book: Book
    selection: Selection
    marked: dict[str, str]  # module key -> step key of the marked step
    culprit: dict[str, str]  # module key -> step key of the found culprit
    jobs: Jobs

    def step_facts(self, step: Step) -> StepFacts:
        """What is known of a step's IR (statistics, changed flag), read from no file."""
        ...

    def facts_arrived(self, module_key: str) -> None:
        """Step facts of a module arrived: the app tells every pane."""
        ...

    def step_changed(self) -> None:
        """The timeline's cursor or marks changed: the app tells every pane."""
        ...

    def go_to_step(self, module_key: str, step: Step, open_diff: bool = False) -> None:
        """Select `step` of the module in every pane (the module first)."""
        ...

    def log_line(self, text: str) -> None:
        """Add a line to the replay log."""
        ...

    def post_message(self, message: Message) -> bool:
        """Post a message to the app (thread-safe)."""
        ...

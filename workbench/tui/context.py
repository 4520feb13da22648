"""What a pane or a control may know of the app: the selection it owns, the narrow
`PaneContext` and, for the replay and localize controls, the wider `ControlContext`.

Panes and controls are typed against these protocols, not the app class, so a pane, a control
(or a test) depends on the few things it reads and the few requests it makes, and the app can
change around them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.widget import Widget

    from workbench.model import Dump, Execution, Module, Step
    from workbench.replay.bisect import Verdict
    from workbench.step_facts import StepFacts
    from workbench.tui.bisect_bar import BisectBar
    from workbench.tui.book import Book
    from workbench.tui.jobs import Jobs

WidgetType = TypeVar("WidgetType", bound="Widget")


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
    evaluating: tuple[str, str] | None  # (module key, step key) of the step being evaluated
    writing: frozenset[str]  # files of the dump still being written (watched live)
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

    def offer_copy(self, text: str) -> None:
        """Make `text` (a verdict, an instruction, a folder) what `y` copies."""
        ...

    def post_message(self, message: Message) -> bool:
        """Post a message to the app (thread-safe)."""
        ...


class ControlContext(PaneContext, Protocol):
    """What the replay and localize controls read from the app and ask of it, besides what a
    pane may: the last bisections, the panes and the bisect bar, Textual's notices and calls."""

    verdicts: dict[str, tuple[Execution | None, Verdict]]  # module key -> its last bisection
    bisect_bar: BisectBar

    @property
    def focused(self) -> Widget | None:
        """The widget with the keyboard focus."""
        ...

    def pane(self, pane_type: type[WidgetType]) -> WidgetType:
        """The main screen's pane of that type."""
        ...

    def module_by_key(self, key: str | None) -> Module | None: ...

    def select_module(self, key: str | None) -> None:
        """Select the module in every pane (as the Modules pane's cursor does)."""
        ...

    def results_changed(self, module_key: str) -> None:
        """Replay results of a module changed in the book: the panes redraw (soon)."""
        ...

    def show_job(self) -> None:
        """Show the running job and its progress on the status line."""
        ...

    def action_focus_pane(self, name: str) -> None:
        """Focus the pane of that class name (turning its tab)."""
        ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None: ...

    def refresh_bindings(self) -> None:
        """Redraw the footer: which keys are active changed."""
        ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                           ) -> bool: ...

    def push_screen(self, screen: Screen[Any], callback: Callable[[Any], Any] | None = None
                    ) -> Any:
        """Show `screen` over the app (a prompt); `callback` gets what it dismisses with."""
        ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any:
        """Run `callback` on the event loop from a worker thread, waiting for it."""
        ...

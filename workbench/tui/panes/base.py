"""What every pane of the main screen is: a titled box the app fills as the selection moves.

A pane is a `Pane` subclass in its own module under `workbench/tui/panes/`, listed in
`panes/__init__.py`. It says its `TITLE`, the digit `KEY` that focuses it, its own `BINDINGS`
(shown in the footer while it has focus, and in the help screen), and overrides the hooks it
needs; the app calls them on every pane:

- `dump_changed(app)`: the folder's model was (re)built (first scan, live updates);
- `module_selected(app, module)`: the user moved to another module (None: no module);
- `step_selected(app, module, step)`: the user moved to another step of the timeline;
- `execution_selected(app, module, execution)`: the user moved to another execution;
- `results_changed(app, module_keys)`: replay results arrived for these modules;
- `facts_changed(app, module_key)`: step statistics and changed flags arrived.

Panes know the app only as a `PaneContext` (`workbench/tui/context.py`): the hooks get it as
`app`, and `self.context` is the same object (set by the app when it makes the pane). They
read what they show from it (`dump`, `book`, `selection`, `step_facts`), ask the core
(`workbench.*`) for everything else, and start their slow work in thread workers, never on
the event loop. A pane on a tab that is not showing can leave
its work for later: `showing` says whether it is on screen, and `shown(app)` is called when
its tab comes up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.containers import Vertical
from textual.widget import Widget

from workbench.output.safe_text import plain
from workbench.tui.focus import move_focus

if TYPE_CHECKING:
    from workbench.model import Execution, Module, Step
    from workbench.tui.context import PaneContext
    from workbench.tui.filter_input import FilterInput
    from workbench.tui.row_table import RowTable


class Pane(Vertical):
    ALLOW_MAXIMIZE = True  # `z` zooms a pane to the whole screen
    TITLE: ClassVar[str] = ""
    KEY: ClassVar[str] = ""
    HELP: ClassVar[str] = ""  # one paragraph for the help screen
    context: PaneContext  # the app, as far as panes know it (set when the app makes the pane)

    DEFAULT_CSS = """
    Pane {
        border-top: solid $panel-lighten-2;
        border-title-color: $text-muted;
        border-title-style: bold;
        height: 1fr;
        &:focus-within {
            border-top: solid $primary;
            border-title-color: $text;
        }
    }
    """

    def on_mount(self) -> None:
        self.set_title()

    def set_title(self, extra: str = "") -> None:
        key = f"{self.KEY} " if self.KEY else ""
        # Text, not a markup string: `extra` may hold a module or pass name from the dump.
        self.border_title = plain(f"{key}{self.TITLE}{'  ' + extra if extra else ''}")

    def focus_target(self) -> Widget:
        """The widget the pane's key focuses."""
        return self

    def close_boxes(self) -> bool:
        """Close the pane's open filter or search boxes (Escape); whether one was open."""
        from workbench.tui.filter_input import FilterInput

        open_boxes = [box for box in self.query(FilterInput) if box.is_open]
        for box in open_boxes:
            box.action_clear()
        return bool(open_boxes)

    @property
    def showing(self) -> bool:
        """Whether the pane is on screen (a right pane's tab is the active one)."""
        from textual.widgets import TabbedContent, TabPane

        # The active tab, not the tab's `display`: while the tabs mount, every tab still
        # displays until the container hides the inactive ones.
        if not self.is_attached:
            return False  # a tab's pane not mounted yet (tabs not shown first mount late)
        tab = next((a for a in self.ancestors if isinstance(a, TabPane)), None)
        if tab is None:
            return True
        tabs = next((a for a in tab.ancestors if isinstance(a, TabbedContent)), None)
        return tabs is None or tabs.active == tab.id

    def shown(self, app: PaneContext) -> None:
        """The pane's tab came up; the default does nothing."""

    def dump_changed(self, app: PaneContext) -> None:
        """The model was rebuilt; the default keeps what is shown."""

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        """Another module was selected; the default ignores it."""

    def step_selected(self, app: PaneContext, module: Module, step: Step | None) -> None:
        """Another step was selected; the default ignores it."""

    def execution_selected(self, app: PaneContext, module: Module,
                           execution: Execution | None) -> None:
        """Another execution was selected in the Executions pane; the default ignores it."""

    def results_changed(self, app: PaneContext, module_keys: set[str]) -> None:
        """Replay results arrived; the default ignores them."""

    def facts_changed(self, app: PaneContext, module_key: str) -> None:
        """Step facts (statistics, changed flags) arrived; the default ignores them."""


class FilteredTablePane(Pane):
    """A pane whose `table` lists rows that its `filter` (opened by `/`) narrows as it is typed.

    Subclasses make `table` and `filter` and say in `refill` which rows the filter keeps.
    """

    table: RowTable
    filter: FilterInput

    def refill(self) -> None:
        """Show the rows the current filter keeps."""

    def action_filter(self) -> None:
        self.filter.open()

    def on_input_changed(self, event: FilterInput.Changed) -> None:
        event.stop()
        self.refill()

    def on_filter_input_done(self, event: FilterInput.Done) -> None:
        event.stop()
        move_focus(self.table)
        self.table.announce()  # what the cursor rests on now is the selection

"""Executions pane: the recorded runs (snapshots, captures) of the selected module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widget import Widget

from workbench.model import Execution, Module
from workbench.tui.panes.base import Pane
from workbench.tui.row_table import Cell, Column, RowTable

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class ExecutionsPane(Pane):
    TITLE = "Executions"
    KEY = "2"
    HELP = ("The recorded executions of the selected module (XLA snapshots, replay captures): "
            "the one under the cursor is what r replays and b bisects.")

    DEFAULT_CSS = """
    ExecutionsPane { height: 5; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.table: RowTable[Execution] = RowTable(
            [
                Column("execution", flex=True),
                Column("kind", 12, min_width=50),
                Column("file", 40, min_width=90),
            ],
            row_key=lambda execution: execution.id,
            render_row=self._cells,
            empty_text="no recorded executions",
            id="executions-table",
        )

    def compose(self) -> ComposeResult:
        yield self.table

    def focus_target(self) -> Widget:
        return self.table

    @property
    def current(self) -> Execution | None:
        return self.table.current

    def _cells(self, execution: Execution) -> list[Cell]:
        return [(execution.id, ""), (execution.kind, "dim"), (execution.file, "dim")]

    def module_selected(self, app: WorkbenchApp, module: Module | None) -> None:
        keep = self.table.current_key if module is self.module else None
        self.module = module
        self.table.set_rows(module.executions if module else [], keep=keep)
        self.set_title(str(len(module.executions)) if module else "")

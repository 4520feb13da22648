"""Executions pane: the recorded runs (snapshots, captures) of the selected module, with the
types of their arguments and a summary of the recorded result (read in a thread worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget

from workbench.hlo_ir import LiteralValue
from workbench.loader import ReadError, load_snapshot
from workbench.model import Execution, Module
from workbench.replay.judge.compare import describe_array
from workbench.tui.panes.base import Pane
from workbench.tui.row_table import Cell, Column, RowTable

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext


def value_summary(value: LiteralValue) -> str:
    """`f32[6,8] in [-1.53, 1.53]`, with NaN/Inf counts when there are any."""
    if isinstance(value, tuple):
        return "(" + ", ".join(value_summary(v) for v in value) + ")"
    array = np.asarray(value)
    text = describe_array(array)
    if array.size == 0 or array.dtype.kind not in "biuf":
        return text
    data = array.astype(np.float64)
    finite = data[np.isfinite(data)]
    if finite.size:
        text += f" in [{finite.min():.4g}, {finite.max():.4g}]"
    bad = int(data.size - finite.size)
    if bad:
        text += f", {bad} NaN/Inf"
    return text


class ExecutionsPane(Pane):
    TITLE = "Executions"
    KEY = "2"
    HELP = ("The recorded executions of the selected module (XLA snapshots, replay captures), "
            "with their argument types and the recorded result: the one under the cursor is "
            "what r replays and b bisects.")

    DEFAULT_CSS = """
    ExecutionsPane { height: 5; }
    """

    class Described(Message):
        def __init__(self, file: str, arguments: str, result: str) -> None:
            super().__init__()
            self.file = file
            self.arguments = arguments
            self.result = result

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.described: dict[str, tuple[str, str]] = {}  # file -> (arguments, result)
        self.table: RowTable[Execution] = RowTable(
            [
                Column("execution", 20),
                Column("arguments", flex=True),
                Column("recorded result", 30, min_width=70),
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
        arguments, result = self.described.get(execution.file, ("…", "…"))
        return [(execution.id, ""), (arguments, "dim"), (result, "dim")]

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        keep = self.table.current_key if module is self.module else None
        self.module = module
        self.table.set_rows(module.executions if module else [], keep=keep)
        self.set_title(str(len(module.executions)) if module else "")
        if module is not None:
            missing = [e for e in module.executions if e.file not in self.described]
            if missing:
                self.describe(app, missing)

    def dump_changed(self, app: PaneContext) -> None:
        self.described.clear()  # a snapshot may have been rewritten

    @work(thread=True, exclusive=True, group="executions", exit_on_error=False)
    def describe(self, app: PaneContext, executions: list[Execution]) -> None:
        for execution in executions:
            if execution.kind != "hlo-snapshot":
                self.post_message(self.Described(execution.file, execution.kind, ""))
                continue
            try:
                snapshot = load_snapshot(app.dump.root, execution)
            except ReadError as error:
                self.post_message(self.Described(execution.file, f"! {error.reason}", ""))
                continue
            arguments = ", ".join(describe_array(a) for a in snapshot.arguments) or "()"
            result = value_summary(snapshot.result) if snapshot.result is not None else \
                "not recorded"
            self.post_message(self.Described(execution.file, arguments, result))

    def on_executions_pane_described(self, event: Described) -> None:
        self.described[event.file] = (event.arguments, event.result)
        self.table.refresh_rows()

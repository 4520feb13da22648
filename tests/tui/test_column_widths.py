"""Columns take the width of their content: module ids and status words are read whole when
the screen has the room, and the module name keeps a readable width."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.replay.judge.outcome import Kind, Outcome
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.row_table import FLEX_MIN, Column, RowTable
from workbench.tui.status import Status

LOOPS = Path(__file__).parents[1] / "data" / "corpus" / "mlir" / "iree-opt-to-loops"


def test_growing_columns_take_their_content_and_leave_the_flex_column_room() -> None:
    table: RowTable[tuple[str, str]] = RowTable(
        [Column("id", 4, grow=30), Column("name", flex=True), Column("st", 3, grow=20)],
        row_key=lambda row: row[0], render_row=lambda row: [(row[0], ""), ("n", ""),
                                                            (row[1], "")])
    table.set_rows([("print-ir-after-change.log", "failing at fusion"), ("a", "ok")])
    assert table.column_widths(100) == [25, 100 - 25 - 17 - 2, 17]
    narrow = table.column_widths(40)  # no room: the flex column keeps FLEX_MIN first
    assert narrow[1] >= FLEX_MIN and sum(narrow) + 2 == 40 and narrow[0] > 4
    assert table.column_widths(10)[0] == 4  # never below the column's own width


def test_module_ids_and_status_are_whole_zoomed_at_120_columns(drive, wait, lines) -> None:
    app = WorkbenchApp(LOOPS, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ModulesPane)
        key = "print-ir-before-after-module-scope.log"
        app.book.set_module_status(key, Status.of(Outcome(Kind.MISMATCH, culprit="canonicalize")))
        app.results_changed(key)
        await pilot.press("1", "z")  # zoomed: the status column shows
        await wait(pilot)
        text = "\n".join(lines(pane.table))
        assert "print-ir-after-change.log" in text
        assert Status.of(Outcome(Kind.MISMATCH, culprit="canonicalize")).text in text
        assert "…" not in text

    drive(app, scenario, size=(120, 40))


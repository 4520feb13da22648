"""Executions pane: the selected module's recorded runs."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.executions import ExecutionsPane


def test_executions_follow_the_module(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ExecutionsPane)
        assert [e.id for e in pane.table.rows] == ["snapshot.-17687811"]
        assert lines(pane.table)[1].startswith("snapshot.-17687811")
        await pilot.press("t")  # show helpers; jit_convert_element_type has two snapshots
        await pilot.press("slash", *"convert", "enter")
        await wait(pilot)
        assert app.module is not None and app.module.name == "jit_convert_element_type"
        assert len(pane.table.rows) == 2

    drive(app, scenario)

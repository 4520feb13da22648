"""IR pane: the selected step's IR in the virtualized view, search."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.timeline import TimelinePane


def test_selected_step_is_shown_and_searchable(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        app.pane(TimelinePane).table.move_to(30)  # XLA step 0028, fusion
        await wait(pilot)
        pane = app.pane(DiffPane)
        view = pane.view
        text = (example / app.step.file).read_text()  # type: ignore[union-attr, operator]
        assert len(view.document.rows) == len(text.splitlines())
        assert "after_fusion" in str(pane.header.render())
        await pilot.press("4", "slash", *"sqrt", "enter")
        assert view.match_count == sum("sqrt" in line for line in text.splitlines())
        shown = lines(view)
        assert any("sqrt" in line for line in shown)

    drive(app, scenario)

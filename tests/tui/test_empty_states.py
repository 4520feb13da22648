"""A pane with nothing to show says why."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane

LOOPS = Path(__file__).parents[1] / "data" / "corpus" / "mlir" / "iree-opt-to-loops"


def test_a_module_without_steps_says_so(drive, wait, lines) -> None:
    app = WorkbenchApp(LOOPS, watch=False)

    async def scenario(pilot: Pilot) -> None:
        app.pane(ModulesPane).table.move_to_key("actions.log")  # an action log: no steps
        await wait(pilot)
        assert app.module is not None and app.module.key == "actions.log"
        shown = "\n".join(lines(app.pane(TimelinePane).table))
        assert "no pass steps in this module" in shown and "select a module" not in shown

    drive(app, scenario, size=(120, 40))

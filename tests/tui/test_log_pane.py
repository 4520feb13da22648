"""The Log pane: long lines wrap (nothing is cut), `w` unwraps them and `h` / `l` scroll."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.replay_log import ReplayLogPane

LONG = "module_0010 jit_ln: " + " ".join(f"x{n}" for n in range(60)) + " END"


def test_long_lines_wrap_and_scroll_sideways_unwrapped(example: Path, drive, wait,
                                                      until) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ReplayLogPane)
        log = pane.log_widget
        pane.write(LONG)
        await pilot.press("8")
        await until(pilot, lambda: len(log.lines) > 1)  # wrapped: one line became several
        shown = "".join(strip.text for strip in log.lines)
        assert "END" in shown and "x59" in shown
        await pilot.press("w")
        await until(pilot, lambda: len(log.lines) == 1 and not log.wrap)
        assert log.scroll_x == 0
        await pilot.press("l", "l")
        await until(pilot, lambda: log.scroll_x == 16)
        await pilot.press("h")
        await until(pilot, lambda: log.scroll_x == 8)

    drive(app, scenario, size=(80, 24))

"""Overlays never hide what they report: a notice takes a line of its own instead of floating
over the diff, and the localization report above the diff shows the differing values first
and scrolls (`f`, then j / k) to the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.timeline import TimelinePane

NOTICE = "a notice long enough to reach far across the screen, where the diff's lines are drawn"


def screen_text(app: WorkbenchApp, region: Region) -> list[str]:
    """What the terminal shows in `region`, line by line (every layer composed)."""
    strips = app.screen._compositor.render_strips()
    return [strips[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_a_notice_covers_no_line_of_the_diff(example: Path, wait, until,
                                             size: tuple[int, int]) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("3")
        app.pane(TimelinePane).table.move_to(30)
        await wait(pilot)
        view = app.pane(DiffPane).view
        app.notify(NOTICE, severity="warning", timeout=30)
        await until(pilot, lambda: any(NOTICE[:20] in line for line in
                                       screen_text(app, app.screen.region)))  # drawn
        await pilot.pause(0.2)
        shown = screen_text(app, view.scrollable_content_region)
        own = [view.render_line(y).text
               for y in range(view.scrollable_content_region.height)]
        assert shown == own  # nothing drawn over the diff
        assert any("+" in line for line in own)  # and it is the diff, with its changes
        assert NOTICE[:40] in "".join(screen_text(app, app.notice_line.region))

    async def main() -> None:  # `run_test` leaves notices out unless asked: here they matter
        async with app.run_test(size=size, notifications=True) as pilot:
            await wait(pilot)
            await scenario(pilot)

    asyncio.run(main())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_localization_report_shows_the_values_and_scrolls(example: Path, drive, wait,
                                                              until, size: tuple[int, int]
                                                              ) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        await pilot.press("L")
        await until(pilot, lambda: app.localize_control.localizations and not app.jobs.busy)
        await wait(pilot)
        diff = app.pane(DiffPane)
        box = diff.finding
        shown = "\n".join(screen_text(app, box.region))
        assert "culprit instruction: rsqrt.2" in shown
        assert "source:  program.py:4" in shown
        assert "first differing elements" in shown  # the values, on screen at once
        report = str(diff.finding_text.render()).splitlines()
        assert "Localizing between" in report[-1] or report[-1].startswith("  ")
        await pilot.press("f")  # into the report
        assert box.has_focus
        await pilot.press("j", "j")
        await until(pilot, lambda: box.scroll_y == 2)
        await pilot.press("G")
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y)
        await pilot.pause(0.2)
        words = " ".join(screen_text(app, box.region)).split()
        assert " ".join(report[-1].split()[-3:]) in " ".join(words)  # the report's end
        await pilot.press("f")  # back to the diff
        assert diff.view.has_focus

    drive(app, scenario, size=size)

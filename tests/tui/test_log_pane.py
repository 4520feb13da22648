"""The Log pane: long lines wrap (nothing is cut), `w` unwraps them and `h` / `l` scroll."""

from __future__ import annotations

from pathlib import Path

import pytest
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


VERDICT = ("module_0010 jit_ln: first failing step 0028 fusion/fusion: max abs error 0.0123 "
           "> atol 1e-05 + rtol 0.0001 at [0, 3]; the error is 41x the rounding error bound "
           "2.9e-06; first at [0, 3]: 1.5 vs 1.4877 END")


def _shown(log: object) -> list[str]:
    from textual.widgets import RichLog

    assert isinstance(log, RichLog)
    return [strip.text.rstrip() for strip in log.lines]


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
def test_lines_wrap_to_the_pane_and_again_when_it_zooms(example: Path, drive, until,
                                                       size: tuple[int, int]) -> None:
    """Every drawn line fits the pane (none is cut at its edge), a wide pane is used whole,
    and zooming the pane wraps the lines again to the new width."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ReplayLogPane)
        log = pane.log_widget
        pane.write(VERDICT)
        await pilot.press("8")
        await until(pilot, lambda: "END" in "".join(_shown(log)))
        width = log.scrollable_content_region.width
        assert all(len(line) <= width for line in _shown(log)), (width, _shown(log))
        assert " ".join(_shown(log)).split(" ", 1)[1] == VERDICT  # after the time stamp
        if len(VERDICT) + 9 > width:  # it wraps: the lines use the pane's width
            assert max(len(line) for line in _shown(log)) > width - 12
        narrow_lines = len(log.lines)
        await pilot.press("z")
        await until(pilot, lambda: log.scrollable_content_region.width > width)
        wide = log.scrollable_content_region.width
        await until(pilot, lambda: max(len(line) for line in _shown(log)) > width
                    or len(VERDICT) + 9 <= width)
        assert all(len(line) <= wide for line in _shown(log))
        assert len(log.lines) <= narrow_lines
        assert " ".join(_shown(log)).split(" ", 1)[1] == VERDICT

    drive(app, scenario, size=size)

"""NO_COLOR: not a single colour reaches the terminal (not even greys), and the cursor, the
focused pane and the active tab are still told apart by bold, reverse and underline."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.style import Style
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.timeline import TimelinePane


def coloured(style: Style | None) -> bool:
    if style is None:
        return False
    return any(c is not None and not c.is_default for c in (style.color, style.bgcolor))


def test_no_color_draws_styles_only(example: Path, drive, wait,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("3")
        table = app.pane(TimelinePane).table
        table.move_to(30)
        await wait(pilot)
        strips = app.screen._compositor.render_strips()
        assert not [s.text for strip in strips for s in strip if coloured(s.style)]
        y = table.region.y + 1 + table.cursor - int(table.scroll_offset.y)
        assert any(s.style is not None and s.style.reverse and "fusion" in s.text
                   for s in strips[y])  # the cursor row, reversed
        title = strips[app.pane(TimelinePane).region.y]
        assert any(s.style is not None and s.style.reverse and "Timeline" in s.text
                   for s in title)  # the focused pane's title

    drive(app, scenario, size=(120, 40))

"""The app on a dump whose names hold markup and terminal escapes: every pane shows them as
text, nothing is read as markup (the app would die of MarkupError, or a click action would
be attached), and no control code reaches the screen."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.pilot import Pilot

from tests.helpers.hostile_names import NAME, make_hostile_dump
from workbench.output.safe_text import visible
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes import LEFT_PANES, RIGHT_PANES
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane


def test_every_pane_shows_the_names_as_text(tmp_path: Path, drive, wait, until, lines) -> None:
    app = WorkbenchApp(make_hostile_dump(tmp_path), watch=False)
    shown = visible(NAME)

    async def scenario(pilot: Pilot) -> None:
        modules = app.pane(ModulesPane)
        head = shown[:19]  # a long name shows as its head and tail (`output.short_names`)
        assert any(head in line for line in lines(modules.focus_target()))
        await pilot.press("1", "enter")  # the module's timeline
        await wait(pilot)
        # The title reads back as markup (Textual's way): its text is the name, escapes shown.
        title = Content.from_markup(app.pane(TimelinePane).border_title or "").plain
        assert shown[:30] in title and "\x1b" not in title
        for pane_type in (*LEFT_PANES, *RIGHT_PANES):
            await pilot.press(pane_type.KEY)
            await pilot.pause()
        await pilot.press("1", "b")  # bisect: the replay log and the badges quote the name
        await until(pilot, lambda: app.jobs.current is None and app.book is not None)
        await wait(pilot)
        assert app.return_code is None  # still running: nothing died of markup
        screen = "\n".join(line for pane in app.panes for line in lines(pane)
                           if hasattr(pane, "render_line"))
        assert "\x1b" not in screen

    drive(app, scenario, size=(140, 40))

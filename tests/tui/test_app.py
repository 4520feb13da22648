"""App-level keys: pane digits (switching tabs), zoom, quit; a missing folder is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from workbench.tui.app import WorkbenchApp, run_app
from workbench.tui.panes import LEFT_PANES, RIGHT_PANES


def test_digits_zoom_and_quit(example: Path, drive) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        tabs = app.query_one("#right", TabbedContent)
        for pane_type in (*LEFT_PANES, *RIGHT_PANES):
            await pilot.press(pane_type.KEY)
            await pilot.pause()
            pane = app.pane(pane_type)
            assert pane.has_focus_within, pane_type.__name__
            if pane_type in RIGHT_PANES:
                assert tabs.active == f"tab-{pane_type.__name__.lower()}"
        await pilot.press("3", "z")
        assert app.screen.maximized is app.pane(LEFT_PANES[2])
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("q")
        await pilot.pause()
        assert app.return_value == 0

    drive(app, scenario)


def test_missing_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_app(tmp_path / "nope") == 2
    assert "no such folder or file" in capsys.readouterr().err
    broken = tmp_path / "t.json"
    broken.write_text("{")
    assert run_app(tmp_path, theme=str(broken)) == 2
    assert "t.json: not JSON" in capsys.readouterr().err


def test_enter_drills_down_to_the_diff(example: Path, drive, wait) -> None:
    from workbench.tui.panes.diff import DiffPane
    from workbench.tui.panes.timeline import TimelinePane

    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("1", "enter")
        timeline = app.pane(TimelinePane)
        assert timeline.table.has_focus
        timeline.table.move_to(30)
        await wait(pilot)
        await pilot.press("enter")
        diff = app.pane(DiffPane)
        assert diff.view.has_focus
        await pilot.press("right_square_bracket", "right_square_bracket")
        total = len(diff.view.document.hunks)
        assert str(diff.header.render()).endswith(f"change 2/{total}")

    drive(app, scenario)


@pytest.mark.parametrize("key", ["ctrl+c", "ctrl+q"])
@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_ctrl_c_and_ctrl_q_quit(example: Path, drive, key: str, size: tuple[int, int]) -> None:
    """A terminal user's reflex quits the app cleanly; no toast of raw markup instead."""
    app = WorkbenchApp(example, watch=False)
    toasts: list[str] = []

    async def scenario(pilot: Pilot) -> None:
        await pilot.press(key)
        await pilot.pause()
        toasts.extend(str(n.message) for n in app._notifications)
        assert app._exit, "the app did not start to quit"

    drive(app, scenario, size=size)
    assert app.return_code == 0
    assert not any("[b]" in toast for toast in toasts)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_footer_always_shows_quit_and_the_palette(example: Path, drive,
                                                  size: tuple[int, int]) -> None:
    from textual.widgets._footer import FooterKey

    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.pause()
        shown = {key.description: key for key in app.screen.query(FooterKey) if key.display}
        assert "Quit" in shown and "palette" in shown, sorted(shown)
        right = app.screen.size.width
        assert all(key.region.right <= right for key in shown.values())

    drive(app, scenario, size=size)

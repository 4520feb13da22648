"""Focus and key routing: keys typed faster than the screen redraws land where the previous
key sent focus, across tab switches, zoom and the search box.

`typed` puts every key in the app's queue before any of them is handled, as a fast typist or
a paste over SSH does; the checks then wait for the app to settle, never for a fixed time.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes import ActionsPane, DiffPane, IreePane, ReplayLogPane, StatsPane

LOOPS = Path(__file__).parents[1] / "data" / "corpus" / "mlir" / "iree-opt-to-loops"


def typed(app: WorkbenchApp, *keys: str) -> None:
    """Queue `keys` at once, as the terminal delivers fast typing."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


def active_tab(app: WorkbenchApp) -> str:
    return app.query_one("#right", TabbedContent).active


def test_leaving_the_iree_tab_keeps_the_next_key(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        for _ in range(3):  # the race this guards against depended on the order of redraws
            typed(app, "9", "5")
            await wait(pilot)
            assert active_tab(app) == "tab-actionspane"
            assert app.focused is app.pane(ActionsPane).action_tree
        typed(app, "9", "tab")
        await wait(pilot)
        assert active_tab(app) == "tab-ireepane"
        assert app.focused is not None and app.focused is not app.pane(IreePane).table

    drive(app, scenario, size=(120, 40))


def test_zoom_typed_right_after_a_pane_key_zooms_that_pane(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        typed(app, "8", "7", "z")
        await wait(pilot)
        assert app.screen.maximized is app.pane(StatsPane)
        typed(app, "8")  # another pane's key leaves the zoom for that pane
        await wait(pilot)
        assert app.screen.maximized is None
        assert app.pane(ReplayLogPane).has_focus_within

    drive(app, scenario, size=(120, 40))


def test_escape_closes_the_search_and_pane_keys_never_reach_it(example: Path, drive,
                                                              wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        diff = app.pane(DiffPane)
        await pilot.press("4", "slash", "f", "u", "enter")  # a search kept open on Enter
        await wait(pilot)
        assert diff.search.display and app.focused is diff.view
        await pilot.press("escape")
        await wait(pilot)
        assert not diff.search.display and diff.search.value == ""
        typed(app, "9", "6", "9", "4", "9", "6")
        await wait(pilot)
        assert diff.search.value == ""
        typed(app, "4")
        await wait(pilot)
        assert app.focused is diff.view

    drive(app, scenario, size=(120, 40))


def test_the_actions_tree_takes_keys_after_its_pane_key(drive, wait) -> None:
    app = WorkbenchApp(LOOPS, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ActionsPane)
        tree = pane.action_tree
        typed(app, "5")
        await wait(pilot)
        assert app.focused is tree and tree.cursor_node is not None, "a cursor from the start"
        first = tree.cursor_node
        assert first.allow_expand and not first.is_expanded
        typed(app, "enter")  # Enter opens a nested action
        await wait(pilot)
        assert first.is_expanded and first.children
        typed(app, "down")
        await wait(pilot)
        assert tree.cursor_node is first.children[0]
        typed(app, "up", "space")  # space folds it again
        await wait(pilot)
        assert tree.cursor_node is first and not first.is_expanded
        typed(app, "1", "5", "down")  # back from another pane: the keys land in the tree
        await wait(pilot)
        assert app.focused is tree and tree.cursor_line == 1

    drive(app, scenario, size=(120, 40))

"""Action log pane on a real IREE compile: lazy tree, filters, backtrace, jump to the step."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.actions import ActionsPane, parse_filter


def test_action_log_tree_filter_backtrace_and_jump(corpus: Path, drive, wait) -> None:
    app = WorkbenchApp(corpus / "mlir" / "iree-compile-jit_f", watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("t", "slash", *"tree", "enter")
        await wait(pilot)
        assert app.module is not None and app.module.format == "mlir-ir-tree"
        pane = app.pane(ActionsPane)
        assert pane.action_log is None  # not read while its tab is not showing
        await pilot.press("5")
        await wait(pilot)
        assert pane.action_log is not None and len(pane.action_log.actions) == 15725
        assert "15,725 actions" in str(pane.border_title)
        tree = pane.action_tree
        assert len(tree.root.children) == len(pane.action_log.roots)

        assert tree.has_focus
        await pilot.press("slash", *"pass:CSEPass", "enter")
        await wait(pilot)
        shown = [node.data for node in tree.root.children]
        assert shown and all(a is not None and a.pass_run().pass_name == "CSEPass"
                             for a in shown)
        await pilot.press("down")
        assert "CSEPass" in str(pane.backtrace.render())
        action = tree.cursor_node.data  # type: ignore[union-attr]  # the cursor is on a node
        step = pane.selected_step()
        assert step is not None and step.pass_name == "CSEPass"
        await pilot.press("o")
        await wait(pilot)
        assert app.step is step
        assert action is not None

        await pilot.press("5", "slash", "escape")
        assert len(tree.root.children) == len(pane.action_log.roots)
        nested = tree.root.children[0]
        assert not nested.children  # children are added when expanded
        nested.expand()
        await pilot.pause()
        assert len(nested.children) == len(nested.data.children)  # type: ignore[union-attr]  # a root node holds its action

    drive(app, scenario)


def test_no_action_log(example: Path, drive) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("5")
        labels = [str(n.label) for n in app.pane(ActionsPane).action_tree.root.children]
        assert labels == ["no action log for this module (MLIR --log-actions-to)"]

    drive(app, scenario)


def test_filter_words() -> None:
    assert parse_filter("tag:apply-* pass:*CSE* loc:m.py:4") == {
        "tag": "apply-*", "pass_name": "*CSE*", "location": "m.py:4"}
    assert parse_filter("pass-execution") == {"tag": "pass-execution"}

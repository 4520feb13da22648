"""The whole bisect flow from the keyboard on layernorm-broken-fusion, automatic and manual:
both end on the culprit, timeline row 30 (XLA step 0028, pass fusion) of module_0010 jit_ln,
its diff open."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.bisect_bar import BisectBar
from workbench.tui.book import step_key
from workbench.tui.ir_view import IrView
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.replay_log import ReplayLogPane

# The culprit, as the app names it: timeline row, pass, pipeline.
FUSION = "#30 fusion in HLO_passes_after_layout_assignment"


def assert_on_culprit_with_diff(app: WorkbenchApp, lines) -> None:  # type: ignore[no-untyped-def]  # the pane's lines, as the test reads them
    assert app.module is not None and app.module.key == "module_0010"
    assert app.step is not None and (app.step.xla_step, app.step.pass_name) == (28, "fusion")
    assert app.culprit["module_0010"] == step_key(app.step)
    status = app.book.module_status("module_0010")
    assert (status.state, status.detail) == ("mismatch", FUSION)
    assert "✗" in lines(app.pane(ModulesPane).table)[1]
    diff = app.pane(DiffPane)
    assert isinstance(app.focused, IrView) and app.focused is diff.view
    assert str(diff.header.render()).startswith("#30 fusion vs #29")
    first = diff.view.document.hunks[0]
    assert diff.view.current_row == first  # at the first change, at the top of the view
    assert diff.view.scroll_offset.y == max(first - 2, 0) > 0, diff.view.scroll_offset
    assert any(" + " in line for line in lines(diff.view))
    assert str(diff.header.render()).endswith(f"change 1/{len(diff.view.document.hunks)}")
    added = [r.text for r in diff.view.document.rows if getattr(r, "kind", "") == "added"]
    assert any(" sqrt(" in text for text in added)  # the planted bug is among the changes


def test_automatic_bisect_lands_on_the_culprit(example: Path, drive, wait, lines,
                                                until) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        assert_on_culprit_with_diff(app, lines)
        log = app.pane(ReplayLogPane).lines
        assert any(f"{FUSION} ✗ mismatch" in line for line in log)
        assert any("evaluations of 38 steps" in line for line in log)
        evaluated = sum(1 for s in app.book.steps if s[0] == "module_0010")
        assert evaluated <= 8  # ceil(log2 38) + 2

    drive(app, scenario)


def test_manual_bisect_good_bad_skip(example: Path, drive, wait, lines, until) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("B")
        bar = app.query_one(BisectBar)
        assert bar.has_class("-active") and "try " in str(bar.render())
        footer_keys = {b.binding.key for b in app.screen.active_bindings.values()
                       if b.binding.action.startswith("bisect_") and b.enabled}
        assert footer_keys == {"g", "b", "s", "e", "escape"}
        manual = app.replay_control.manual
        assert manual is not None
        first = manual.proposal
        assert first is not None and app.step is not None and app.step.index == first.index
        await pilot.press("s")  # skip the first proposal: the next one is another step
        assert manual.state.skipped == [manual.position_of(first)]
        assert manual.proposal is not None and manual.proposal.index != first.index
        rounds = 0
        while manual.proposal is not None:
            rounds += 1
            assert rounds < 12
            proposal = manual.proposal
            assert app.step is not None and app.step.index == proposal.index
            assert f"try #{proposal.index} {proposal.pass_name}" in str(bar.render())
            await pilot.press("e")  # evaluate it, then judge from the result like a user
            await until(pilot, lambda p=proposal: app.book.step_status("module_0010", p).state
                        not in ("none", "running") and not app.jobs.busy)
            state = app.book.step_status("module_0010", proposal).state
            assert state in ("ok", "mismatch")
            await pilot.press("g" if state == "ok" else "b")
        await wait(pilot)
        assert f"culprit: {FUSION}" in str(bar.render())
        assert_on_culprit_with_diff(app, lines)
        await pilot.press("escape")
        assert not bar.has_class("-active") and app.replay_control.manual is None
        await pilot.press("g")  # back to the table's own key: first row
        assert app.replay_control.manual is None

    drive(app, scenario)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_changes_step_from_the_first_and_say_when_they_wrap(example: Path, drive, wait, lines,
                                                            until,
                                                            size: tuple[int, int]) -> None:
    """Landed on the culprit at its first change, `]` goes to the second, `[` back to the
    first, and `[` again to the last, saying it wrapped."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        assert_on_culprit_with_diff(app, lines)
        diff = app.pane(DiffPane)
        hunks = diff.view.document.hunks
        total = len(hunks)
        assert total > 2

        def header() -> str:
            return str(diff.header.render())

        await pilot.press("right_square_bracket")
        assert header().endswith(f"change 2/{total}") and diff.view.current_row == hunks[1]
        await pilot.press("left_square_bracket")
        assert header().endswith(f"change 1/{total}") and diff.view.current_row == hunks[0]
        await pilot.press("left_square_bracket")
        assert header().endswith(f"change {total}/{total} (wrapped to the last)")
        await pilot.press("right_square_bracket")
        assert header().endswith(f"change 1/{total} (wrapped to the first)")

    drive(app, scenario, size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_manual_bisection_shows_each_proposal_at_its_change(example: Path, drive, wait,
                                                            size: tuple[int, int]) -> None:
    """`B` from the Breaks tab: each proposed step comes up in the IR diff tab (not under
    Breaks), at its first change, named as its timeline row is."""
    from textual.widgets import TabbedContent

    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("6", "B")
        await wait(pilot)
        manual = app.replay_control.manual
        bar = app.query_one(BisectBar)
        diff = app.pane(DiffPane)
        tabs = app.query_one("#right", TabbedContent)
        for _ in range(3):
            manual = app.replay_control.manual
            proposal = manual.proposal if manual is not None else None
            assert proposal is not None
            assert tabs.active == "tab-diffpane"
            assert f"try #{proposal.index} {proposal.pass_name}" in str(bar.render())
            assert diff.request is not None and diff.request.step is proposal
            hunks = diff.view.document.hunks
            if hunks:
                assert diff.view.current_row == hunks[0]
                assert diff.view.scroll_offset.y == min(max(hunks[0] - 2, 0),
                                                        diff.view.max_scroll_y)
            await pilot.press("6", "b")  # back to Breaks, judge: the next one shows its diff
            await wait(pilot)

    drive(app, scenario, size=size)

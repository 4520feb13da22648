"""Manual bisection (`B`) on a small screen: its progress line and its keys are visible with
the diff focused, and once the culprit is found its keys give way to the usual ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from workbench.tui.app import WorkbenchApp
from workbench.tui.bisect_bar import BisectBar
from workbench.tui.panes.diff import DiffPane

CULPRIT_XLA_STEP = 28  # layernorm-broken-fusion: module_0010's fusion step breaks it


def footer_keys(app: WorkbenchApp) -> tuple[list[str], list[str]]:
    """(keys whose label is wholly on screen, keys cut by the screen's right edge)."""
    width = app.size.width
    shown, cut = [], []
    for key in app.screen.query_one(Footer).query(FooterKey):
        region = key.region
        if region.width == 0 or region.x >= width:
            continue
        (shown if region.right <= width else cut).append(key.key)
    return shown, cut


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_bisect_keys_and_progress_show_then_give_way(example: Path, drive, wait, until,
                                                    size: tuple[int, int]) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("B", "4")
        await wait(pilot)
        assert app.focused is app.pane(DiffPane).view
        bar = app.query_one(BisectBar)
        footer = app.screen.query_one(Footer)
        assert bar.region.height == 1 and not bar.region.overlaps(footer.region)
        assert "candidates left, about" in str(bar.render())
        shown, cut = footer_keys(app)
        assert {"g", "b", "s", "e", "escape"} <= set(shown), shown
        assert not cut, f"a key cut at the edge: {cut}"
        manual = app.replay_control.manual
        assert manual is not None
        culprit = next(s for s in manual.steps if s.xla_step == CULPRIT_XLA_STEP)
        while (proposal := manual.proposal) is not None:
            await pilot.press("g" if proposal.index < culprit.index else "b")
        await wait(pilot)
        assert "culprit: #30 fusion in HLO_passes_after_layout_assignment" in str(bar.render())
        shown, cut = footer_keys(app)
        assert not {"g", "s", "e"} & set(shown) and not cut
        assert not app.book.steps  # the manual bisection evaluated no step of its own
        await pilot.press("b")  # the automatic bisection again, not a mark
        await until(pilot, lambda: not app.jobs.busy)  # it may have ended on a fast machine
        assert any(key[0] == "module_0010" for key in app.book.steps)
        status = app.book.module_status("module_0010")
        assert (status.state, status.detail) == (
            "mismatch", "#30 fusion in HLO_passes_after_layout_assignment")

    drive(app, scenario, size=size)

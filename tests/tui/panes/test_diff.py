"""IR diff pane: step vs predecessor or marked step, hunks, side by side, raw, computations."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.ir_view import TextRow
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.timeline import TimelinePane
from workbench.tui.section_picker import SectionPicker


def _rows_text(pane: DiffPane) -> list[str]:
    out = []
    for row in pane.view.document.rows:
        halves = row if isinstance(row, tuple) else (row,)
        out.append(" | ".join(h.gutter + h.text for h in halves))
    return out


def test_fusion_step_diff(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        app.pane(TimelinePane).table.move_to(30)  # XLA step 0028, fusion
        await wait(pilot)
        pane = app.pane(DiffPane)
        assert pane.diff is not None and not pane.diff.equal
        header = str(pane.header.render())
        assert header.startswith("#30 fusion vs #29  ·  -20 +41  ·  in HLO_passes_after_layout_"
                                 "assignment  ·  ")
        assert f"-{pane.diff.removed} +{pane.diff.added}" in header and "normalized" in header
        rows = pane.view.document.rows
        added = [r.text for r in rows if isinstance(r, TextRow) and r.kind == "added"]
        removed = [r.text for r in rows if isinstance(r, TextRow) and r.kind == "removed"]
        # The fusion pass builds fused computations; the planted bug shows as rsqrt -> sqrt.
        assert any(t.startswith("%fused_computation") for t in added)
        assert any(" sqrt(" in t for t in added) and any(" rsqrt(" in t for t in removed)
        assert all("+" in r.gutter for r in rows if isinstance(r, TextRow) and r.kind == "added")

        await pilot.press("4", "right_square_bracket")
        first = pane.view.current_row
        assert first == pane.view.document.hunks[0]
        assert rows[first].kind in ("added", "removed")  # type: ignore[union-attr]  # a hunk's first row is text
        assert any(("- " in line or "+ " in line) for line in lines(pane.view))

        await pilot.press("v")
        await wait(pilot)
        assert pane.view.document.side_by_side
        assert all(isinstance(r, tuple) for r in pane.view.document.rows)
        await pilot.press("v")
        await wait(pilot)

        await pilot.press("c")
        assert isinstance(app.screen, SectionPicker)
        await pilot.press("down", "enter")  # the first changed computation after "all"
        await wait(pilot)
        assert pane.section is not None and f"only {pane.section}" in str(pane.header.render())
        restricted = _rows_text(pane)
        assert 0 < len(restricted) < len(rows)
        await pilot.press("c", "home", "enter")  # back to all
        await wait(pilot)
        assert pane.section is None and len(pane.view.document.rows) == len(rows)

        await pilot.press("slash", *"sqrt", "enter")
        assert pane.view.match_count >= 2

    drive(app, scenario)


def test_marked_step_is_the_base(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(TimelinePane).table
        await pilot.press("3")
        table.move_to(2)  # XLA step 0000
        await pilot.press("m")
        table.move_to(30)
        await wait(pilot)
        header = str(app.pane(DiffPane).header.render())
        assert header.startswith(
            "#30 fusion vs marked #2 pipeline-start in async-collective  ·  ")

    drive(app, scenario)


def test_renumbering_only_step_raw_and_normalized(corpus: Path, drive, wait) -> None:
    app = WorkbenchApp(corpus / "xla" / "fori_loop", watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("t", "slash", *"jit_f", "enter")
        await wait(pilot)
        assert app.module is not None and app.module.key == "module_0002"
        table = app.pane(TimelinePane).table
        step = next(s for s in table.rows if s.xla_step == 22)
        table.move_to(table.rows.index(step))
        await wait(pilot)
        pane = app.pane(DiffPane)
        assert pane.diff is not None and pane.diff.equal
        assert "no change (normalized)" in str(pane.header.render())
        assert app.step_facts(step).changed is False
        await pilot.press("4", "o")
        await wait(pilot)
        assert pane.diff is not None and not pane.diff.equal
        assert "raw" in str(pane.header.render())

    drive(app, scenario)

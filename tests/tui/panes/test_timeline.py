"""Timeline pane: steps, changed markers and deltas, hide unchanged, jumps, filter, marks."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.book import step_key
from workbench.tui.panes.timeline import TimelinePane


def test_timeline_of_jit_ln(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(TimelinePane)
        table = pane.table
        assert len(table.rows) == 39
        fusion = table.rows[30]
        assert (fusion.xla_step, fusion.pass_name) == (28, "fusion")
        facts = app.step_facts(fusion)
        assert facts.changed is True
        assert facts.stats is not None and facts.stats.ops["fusion"] == 2
        # pipeline-start steps repeat the IR the previous pipeline ended with
        unchanged = table.rows[3]
        assert app.step_facts(unchanged).changed is False

        await pilot.press("3")
        assert table.has_focus
        await pilot.press("u")  # hide unchanged steps
        kept = table.rows
        assert fusion in kept and unchanged not in kept
        assert all(app.step_facts(s).changed is not False for s in kept)
        await pilot.press("u")
        assert len(table.rows) == 39

        await pilot.press("g", "right_square_bracket")
        first_changed = table.current
        assert first_changed is not None and app.step_facts(first_changed).changed
        assert all(not app.step_facts(s).changed for s in table.rows[1:first_changed.index])
        await pilot.press("right_square_bracket", "left_square_bracket")
        assert table.current is first_changed

        await pilot.press("slash", *"fusion", "enter")
        assert {s.pass_name for s in table.rows} >= {"fusion", "fusion-wrapper"}
        assert all("fusion" in s.pass_name or "fusion" in (s.pipeline or "") for s in table.rows)
        await pilot.press("slash", "escape")
        assert len(table.rows) == 39

        table.move_to(30)
        await wait(pilot)
        assert app.step is fusion
        await pilot.press("m")
        assert app.marked["module_0010"] == step_key(fusion)
        assert "◆" in lines(table)[1 + 30 - int(table.scroll_offset.y)]
        await pilot.press("m")
        assert "module_0010" not in app.marked

    drive(app, scenario)


def test_delta_column_shows_instruction_count_change(example: Path, drive, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(TimelinePane).table
        table.move_to(30)
        before = app.step_facts(table.rows[29]).stats
        after = app.step_facts(table.rows[30]).stats
        assert before is not None and after is not None
        expected = f"{after.instructions - before.instructions:+d}"
        row = lines(table)[1 + 30 - int(table.scroll_offset.y)]
        assert expected in row.split()

    drive(app, scenario)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_pipeline_start_rows_say_which_pipeline(example: Path, drive, lines,
                                                 size: tuple[int, int]) -> None:
    """XLA's `pipeline-start` steps are named by the pipeline they start, at any width (the
    pipeline column shows only in a wide pane)."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(TimelinePane).table
        table.move_to(0)
        await pilot.pause()
        shown = lines(table)
        # rows 2.. are XLA steps 0000 (async-collective), 0001 (pre-spmd-partitioner), ...
        assert "start of async-co" in shown[1 + 2], shown
        assert "start of pre-spmd" in shown[1 + 3]
        assert not any(row.split()[2:3] == ["pipeline-start"] for row in shown[1:])

    drive(app, scenario, size=size)


def test_filter_matches_pass_names_before_fuzzy(example: Path, drive) -> None:
    """What a user types is a pass name, or a part of one: `/alg` keeps the algsimp steps
    only, `/fusion` the fusion passes and not `simplification_after_layout_assignment`."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(TimelinePane).table
        await pilot.press("3", "slash", *"alg", "enter")
        assert {s.pass_name for s in table.rows} == {"algsimp"}
        assert len(table.rows) == 4
        await pilot.press("slash", "escape", "slash", *"fusion", "enter")
        assert {s.pass_name for s in table.rows} == {"fusion", "fusion-wrapper"}
        await pilot.press("slash", "escape", "slash", *"scatter", "enter")
        # no pass is called that: the pipeline of that name
        assert {s.pipeline for s in table.rows} == {"post_scatter_expansion_simplification"}
        await pilot.press("slash", "escape", "slash", *"lyasgn", "enter")
        assert "layout-assignment" in {s.pass_name for s in table.rows}  # fuzzy, as before

    drive(app, scenario)

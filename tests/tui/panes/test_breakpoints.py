"""Breakpoints pane: add/toggle/delete, and stepping that moves the timeline cursor."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.breakpoints import BreakpointsPane
from workbench.tui.panes.timeline import TimelinePane


def test_breakpoints_and_stepping(example: Path, drive, wait, lines, until) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(BreakpointsPane)
        await pilot.press("3", "g", "6")
        assert pane.table.has_focus
        await pilot.press("a", *"pass:(", "enter")  # refused: not a regular expression
        assert len(pane.breakpoints) == 0
        assert pane.table.has_focus  # the pane's keys work again
        await pilot.press("a", "ctrl+u", *"op:sqrt", "enter")
        assert [b.spec for b in pane.breakpoints] == ["op:sqrt"]
        assert "op:sqrt" in lines(pane.table)[1]

        await pilot.press("c")  # continue from the timeline cursor (step 0)
        await until(pilot, lambda: not app.jobs.busy and "stopped" in str(pane.state.render()))
        await wait(pilot)
        assert app.step is not None and app.step.xla_step == 28
        assert "breakpoint #1 op:sqrt at 0028 fusion" in str(pane.state.render())
        assert next(iter(pane.breakpoints)).hits == 1
        assert app.pane(TimelinePane).table.current is app.step

        await pilot.press("6", "s")  # step: the next step, whatever it is
        await until(pilot, lambda: not app.jobs.busy and app.step.index == 31)  # type: ignore[union-attr]

        await pilot.press("6", "t")  # disable: continue runs to the end
        assert "○" in lines(pane.table)[1]
        app.pane(TimelinePane).table.move_to(2)
        await wait(pilot)
        await pilot.press("6", "c")
        await until(pilot, lambda: not app.jobs.busy and "end of the pipeline"
                    in str(pane.state.render()))

        await pilot.press("6", "a", *"mismatch", "enter", "escape")
        app.pane(TimelinePane).table.move_to(2)
        await wait(pilot)
        await pilot.press("6", "c")  # replays each step it passes, stops at the first mismatch
        await until(pilot, lambda: not app.jobs.busy and "mismatch" in str(pane.state.render()))
        await wait(pilot)
        assert app.step is not None and app.step.xla_step == 28
        assert app.book.step_status("module_0010", app.step).state == "mismatch"

        await pilot.press("6", "d", "d")
        assert len(pane.breakpoints) == 0

    drive(app, scenario)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_a_typo_is_said_in_the_pane_and_frees_the_keys(example: Path, drive,
                                                        size: tuple[int, int]) -> None:
    """`a`, `CSEPass`, Enter: the pane says what is wrong and the form to use, the pane's keys
    work again (not typed into the box), and `a` brings the typo back to be corrected."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(BreakpointsPane)
        await pilot.press("6", "a")
        assert "KIND:PATTERN" in pane.entry.placeholder and "pass:" in pane.entry.placeholder
        await pilot.press(*"CSEPass", "enter")
        await pilot.pause()
        assert len(pane.breakpoints) == 0
        said = str(pane.state.render())
        assert "not added" in said and "CSEPass" in said and "KIND:PATTERN" in said, said
        assert pane.table.has_focus and not pane.entry.is_open
        await pilot.press("a")
        assert pane.entry.has_focus and pane.entry.value == "CSEPass"
        await pilot.press("home", *"pass:", "end", "backspace", "backspace", "backspace",
                          "backspace", "enter")
        await pilot.pause()
        assert [b.spec for b in pane.breakpoints] == ["pass:CSE"]
        assert pane.table.has_focus and "not added" not in str(pane.state.render())

    drive(app, scenario, size=size)

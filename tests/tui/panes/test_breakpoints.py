"""Breakpoints pane: add/toggle/delete, and stepping that moves the timeline cursor."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

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
        await pilot.press("ctrl+u", *"op:sqrt", "enter", "escape")
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
        await until(pilot, lambda: not app.jobs.busy and app.step.index == 31)  # type: ignore[union-attr]  # a step is selected

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
def test_a_refused_breakpoint_says_why_in_the_pane(example: Path, drive, wait, lines,
                                                   size: tuple[int, int]) -> None:
    app = WorkbenchApp(example, watch=False)

    def shown(widget: Widget) -> str:
        return " ".join(line.strip() for line in lines(widget))

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(BreakpointsPane)
        await pilot.press("3", "g", "6", "a")
        assert pane.entry.has_focus
        assert shown(pane.entry).startswith("KIND:PATTERN, e.g. pass:CSE")  # the placeholder

        await pilot.press(*"CSEPass", "enter")  # a pass name without its kind
        await wait(pilot)
        assert len(pane.breakpoints) == 0
        refusal = shown(pane.refusal)
        assert refusal.startswith("✗ 'CSEPass': write KIND:PATTERN")
        assert "pass:CSEPass" in refusal and "Esc" in refusal
        assert pane.entry.has_focus and pane.entry.value == "CSEPass"  # to be corrected

        await pilot.press("escape")  # gives up: the box and the refusal go, the table has focus
        await wait(pilot)
        assert not pane.entry.is_open and not pane.refusal.display
        assert pane.table.has_focus

        await pilot.press("a", *"pas:CSE", "enter")
        await wait(pilot)
        assert "'pas:CSE'" in shown(pane.refusal) and pane.entry.has_focus
        await pilot.press("ctrl+u", *"pass:CSE", "enter")  # corrected: added, the box closes
        await wait(pilot)
        assert [b.spec for b in pane.breakpoints] == ["pass:CSE"]
        assert not pane.entry.is_open and not pane.refusal.display
        assert pane.table.has_focus
        assert "pass:CSE" in lines(pane.table)[1]

    drive(app, scenario, size)

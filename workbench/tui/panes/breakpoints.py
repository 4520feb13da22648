"""Breakpoints pane: list, add, enable/disable, delete breakpoints, and step over the pipeline.

The stepping itself is `workbench.debug`; a command runs as a background job (reading step
facts and replaying steps for `mismatch` breakpoints take time), starts from the timeline's
cursor and moves the cursor to where it stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from workbench.debug.breakpoints import Breakpoint, BreakpointError, BreakpointList
from workbench.debug.controller import Stepper, Stop
from workbench.debug.facts import DumpFacts, action_tags_of
from workbench.model import Module, Step
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import Replay
from workbench.tui.data_widgets import DataStatic
from workbench.tui.filter_input import FilterInput
from workbench.tui.focus import move_focus
from workbench.tui.jobs import Job, StepReplayed
from workbench.tui.panes.base import Pane
from workbench.tui.row_table import Cell, Column, RowTable
from workbench.tui.step_names import step_name
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext

SPEC_HELP = "pass:REGEX  action:TAG  loc:FILE:LINE  op:NAME  op-change:NAME  mismatch"
# The box's placeholder: the form first (a bare pass name is the usual first try).
IDLE = "not running: put the cursor on a step, then c, s, n, f or x"
ENTRY_HELP = "KIND:PATTERN, e.g. pass:CSE  (kinds: pass action loc op op-change; or mismatch)"


class BreakpointsPane(Pane):
    TITLE = "Breaks"
    KEY = "6"
    HELP = ("Breakpoints on the pipeline: " + SPEC_HELP + ". c continues to the next "
            "breakpoint, s steps to the next step, n steps over nested pipelines, f finishes "
            "the enclosing pipeline, x skips the current step (never stopped at again). "
            "Commands start at the timeline's cursor; a mismatch breakpoint replays each "
            "step it passes.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "add", "Add"),
        Binding("t", "toggle_breakpoint", "On/off"),
        Binding("d,delete", "delete", "Delete"),
        Binding("c", "run('continue_')", "Continue"),
        Binding("s", "run('step')", "Step"),
        Binding("n", "run('next')", "Next"),
        Binding("f", "run('finish')", "Finish"),
        Binding("x", "run('skip')", "Skip"),
    ]

    class Stopped(Message):
        """The stepper stopped (`where`; not `stop`, which would hide `Message.stop`)."""

        def __init__(self, module_key: str, where: Stop) -> None:
            super().__init__()
            self.module_key = module_key
            self.where = where

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.breakpoints = BreakpointList()
        self.steppers: dict[str, Stepper] = {}
        self.state = DataStatic(IDLE, id="breakpoints-state")
        self.table: RowTable[Breakpoint] = RowTable(
            [Column("#", 3, align="right"), Column("", 1), Column("breakpoint", flex=True),
             Column("hits", 4, align="right")],
            row_key=lambda b: str(b.id), render_row=self._cells,
            empty_text="no breakpoints: a adds one", id="breakpoints-table")
        self.entry = FilterInput(placeholder=ENTRY_HELP, id="breakpoints-entry")

    def compose(self) -> ComposeResult:
        yield self.state
        yield self.table
        yield self.entry

    def focus_target(self) -> Widget:
        return self.table

    def _cells(self, breakpoint_: Breakpoint) -> list[Cell]:
        marker = ("●", "status--fail") if breakpoint_.enabled else ("○", "dim")
        return [(str(breakpoint_.id), "dim"), marker, (breakpoint_.spec, ""),
                (str(breakpoint_.hits), "dim")]

    def refill(self) -> None:
        self.table.set_rows(list(self.breakpoints))
        self.set_title(f"{len(self.breakpoints.active())}/{len(self.breakpoints)} on"
                       if len(self.breakpoints) else "")

    def dump_changed(self, app: PaneContext) -> None:
        self.steppers.clear()  # steps may have changed; facts are read again on demand

    # ----- editing ----------------------------------------------------------------------------

    def action_add(self) -> None:
        self.entry.open()

    def add(self, spec: str) -> Breakpoint | None:
        """Add the breakpoint `spec`; one that does not parse is said in the pane (what is
        wrong and the form), not in a passing toast."""
        try:
            added = self.breakpoints.add(spec)
        except BreakpointError as error:
            self.state.update(f"not added: {error}; a corrects it (e.g. pass:CSE)")
            self.state.add_class("-refused")
            return None
        if self.state.has_class("-refused"):
            self.state.remove_class("-refused")
            self.state.update(IDLE)
        self.refill()
        self.table.move_to_key(str(added.id))
        return added

    def on_input_submitted(self, event: FilterInput.Submitted) -> None:
        event.stop()
        if event.value.strip() and self.add(event.value) is not None:
            self.entry.value = ""

    def on_input_changed(self, event: FilterInput.Changed) -> None:
        event.stop()

    def on_filter_input_done(self, event: FilterInput.Done) -> None:
        """Enter or Escape: the box closes and the pane's keys work again. A refused spec
        stays in the box for `a` to correct (the pane says why it was refused)."""
        event.stop()
        self.entry.remove_class("-open")
        move_focus(self.table)

    def action_toggle_breakpoint(self) -> None:
        current = self.table.current
        if current is not None:
            self.breakpoints.enable(current.id, not current.enabled)
            self.refill()

    def action_delete(self) -> None:
        current = self.table.current
        if current is not None:
            self.breakpoints.remove(current.id)
            self.refill()

    # ----- stepping ---------------------------------------------------------------------------

    def stepper_for(self, app: PaneContext, module: Module) -> Stepper:
        stepper = self.steppers.get(module.key)
        if stepper is None:
            facts = DumpFacts(app.dump.root, module, action_tags_of(app.dump.root, module))
            stepper = Stepper(module.steps, self.breakpoints, facts)
            self.steppers[module.key] = stepper
        return stepper

    def action_run(self, command: str) -> None:
        app = self.context
        module, step = app.selection.module, app.selection.step
        if module is None or step is None:
            self.notify("select a module and a step first", timeout=3)
            return
        execution = app.selection.execution_or_first()
        start = step.index
        label = command.rstrip("_")

        def work(job: Job, replay: Replay) -> None:
            stepper = self.stepper_for(app, module)
            positions = {s.index: p for p, s in enumerate(replay.steps)}

            def evaluate(target: Step) -> Kind:
                position = positions.get(target.index)
                if position is None:
                    return Kind.UNSUPPORTED  # not a replayable step
                result = replay.evaluate(position)
                app.post_message(StepReplayed(job, result))
                return result.kind

            stepper.evaluate = evaluate
            stepper.go_to(start)
            stop = getattr(stepper, command)()
            self.post_message(self.Stopped(module.key, stop))

        app.jobs.run_in_background(f"{label} from {step_name(step)}", module, execution, work)

    def on_breakpoints_pane_stopped(self, event: Stopped) -> None:
        app = self.context
        stepper = self.steppers.get(event.module_key)
        if stepper is None:
            return
        stop = event.where
        where = stop.describe(stepper.steps)
        self.state.update(f"stopped: {where} ({plural(stop.passed, 'step')} passed)")
        app.log_line(f"debug: {where}")
        self.table.refresh_rows()
        app.go_to_step(event.module_key, stepper.steps[stop.position])

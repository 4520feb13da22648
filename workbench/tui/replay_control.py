"""The app's replay commands and how their results reach the panes (a mixin of the app).

`r` replays the selected execution step by step, `b` bisects it, `T` triages every module,
`B` starts a manual bisection (`g`/`b`/`s` mark the proposed step, `e` evaluates it), escape
cancels. Results become `Status`es in the app's book (module badges, timeline results), lines
in the replay log, and a finished bisection lands on its culprit with the diff open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from workbench.model import Execution, Module, Step
from workbench.replay.backends import NoBackend, open_backend
from workbench.replay.bisect import Verdict
from workbench.replay.outcome import Kind, Outcome
from workbench.replay.steps import StepResult
from workbench.replay.triage import TriageResult
from workbench.tui.bisect_bar import BisectBar, ManualBisect
from workbench.tui.book import step_key
from workbench.tui.jobs import (
    JobEnded,
    JobProgress,
    Jobs,
    StepReplayed,
    TriageReported,
    VerdictReached,
)
from workbench.tui.panes.iree import IreePane, capture_of
from workbench.tui.status import Status
from workbench.tui.status_bar import progress_bar

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp

# The app's own BINDINGS include these (Textual reads bindings from widget classes only).
REPLAY_BINDINGS: list[BindingType] = [
    Binding("r", "replay", "Replay", tooltip="Replay every step of the selected execution"),
    Binding("b", "bisect", "Bisect",
            tooltip="Find the culprit step of the selected execution by bisection"),
    Binding("B", "manual_bisect", "Manual bisect", show=False,
            tooltip="Bisect by hand: mark proposed steps good, bad or skip"),
    Binding("T", "triage", "Triage", show=False,
            tooltip="Bisect every module and execution of the dump in the background"),
    Binding("escape", "cancel", "Cancel", show=False,
            tooltip="Cancel the running job, or stop the manual bisection"),
    # Manual bisection keys: active only while one runs (check_action), ahead of the panes'.
    Binding("g", "bisect_mark('good')", "Good", priority=True),
    Binding("b", "bisect_mark('bad')", "Bad", priority=True),
    Binding("s", "bisect_mark('skip')", "Skip", priority=True),
    Binding("e", "bisect_evaluate", "Evaluate", priority=True),
]
MODAL_ACTIONS = {"bisect_mark", "bisect_evaluate"}


def result_status(result: StepResult) -> Status:
    return Status.of(result.outcome)


def verdict_status(verdict: Verdict) -> Status:
    """A module's badge from a bisection verdict: `✗ fusion`, `? sort`, `✓`."""
    return Status.of(verdict.outcome)


def triage_status(result: TriageResult) -> Status:
    return Status.of(result.outcome)


class ReplayControl:
    """Mixed into `WorkbenchApp` (its bindings are `REPLAY_BINDINGS`)."""

    jobs: Jobs
    manual: ManualBisect | None

    def check_action(self: WorkbenchApp, action: str, parameters: tuple) -> bool | None:
        if action in MODAL_ACTIONS:
            # Modal keys: only while a manual bisection runs, and never while typing.
            from textual.widgets import Input

            return self.manual is not None and not isinstance(self.focused, Input)
        return True

    # ----- starting jobs ----------------------------------------------------------------------

    def _selected(self: WorkbenchApp) -> tuple[Module, Execution | None] | None:
        from workbench.tui.panes.executions import ExecutionsPane
        from workbench.tui.panes.modules import ModulesPane

        listed = self.pane(ModulesPane).table.current_key
        if listed is not None and (self.module is None or self.module.key != listed):
            self.select_module(listed)  # a key pressed before the selection settled
        if self.module is None:
            self.notify("select a module first", timeout=3)
            return None
        self.selection.execution = self.pane(ExecutionsPane).current  # settled or not
        return self.module, self.selection.execution_or_first()

    def _mark_running(self: WorkbenchApp, module: Module) -> None:
        self.book.clear_module(module.key)
        self.culprit.pop(module.key, None)
        self.book.set_module_status(module.key, Status("running"))
        self.results_changed(module.key)

    def action_replay(self: WorkbenchApp) -> None:
        selected = self._selected()
        if selected and capture_of(selected[1]) is not None:
            # An IREE capture has no steps: IREE's own tool replays it whole, in its pane.
            self.action_focus_pane(IreePane.__name__)
            self.call_after_refresh(self.pane(IreePane).action_replay)
            return
        if selected and self.jobs.replay(*selected, bisect=False):
            self._mark_running(selected[0])

    def action_bisect(self: WorkbenchApp) -> None:
        selected = self._selected()
        if selected and capture_of(selected[1]) is not None:
            self.notify("an IREE capture has no passes to bisect; r replays it whole",
                        timeout=4)
            return
        if selected and self.jobs.replay(*selected, bisect=True):
            self._mark_running(selected[0])

    def action_triage(self: WorkbenchApp) -> None:
        if self.jobs.triage():
            for module in self.dump.modules:
                if module.executions:
                    self._mark_running(module)

    def action_cancel(self: WorkbenchApp) -> None:
        if self.jobs.cancel():
            self.notify("cancelling…", timeout=2)
        elif self.manual is not None:
            self.manual = None
            self.query_one(BisectBar).show_state(None)
            self.refresh_bindings()

    # ----- manual bisection -------------------------------------------------------------------

    def action_manual_bisect(self: WorkbenchApp) -> None:
        selected = self._selected()
        if selected is None:
            return
        module, execution = selected
        try:
            steps = open_backend(self.dump.root, module).steps()
        except NoBackend as error:
            self.notify(str(error), severity="error", timeout=5)
            return
        if len(steps) < 2:
            self.notify("nothing to bisect: fewer than two replayable steps", timeout=4)
            return
        self.manual = ManualBisect.start(module.key, module.name or module.key, execution, steps)
        self._bisect_moved()

    def _bisect_moved(self: WorkbenchApp) -> None:
        manual = self.manual
        assert manual is not None
        self.query_one(BisectBar).show_state(manual)
        self.refresh_bindings()
        proposal = manual.proposal
        if proposal is not None:
            self.go_to_step(manual.module_key, proposal)
            return
        culprit = manual.culprit
        if culprit is not None:
            outcome = Outcome(Kind.MISMATCH, culprit=culprit.pass_name)
            self.book.set_module_status(manual.module_key, Status.of(outcome))
            self.culprit[manual.module_key] = step_key(culprit)
            self.results_changed(manual.module_key)
            self.go_to_step(manual.module_key, culprit, open_diff=True)
        self.log_line(f"manual bisect {manual.module_name}: {manual.outcome()}")

    def action_bisect_mark(self: WorkbenchApp, mark: str) -> None:
        manual = self.manual
        if manual is None or manual.proposal is None:
            return
        error = manual.mark(self.step, mark)  # type: ignore[arg-type]
        if error:
            self.notify(error, severity="warning", timeout=4)
            return
        self._bisect_moved()

    def action_bisect_evaluate(self: WorkbenchApp) -> None:
        manual = self.manual
        if manual is None or self.module is None:
            return
        step = self.step if manual.position_of(self.step) is not None else manual.proposal
        if step is not None:
            self.jobs.evaluate(self.module, manual.execution, step)

    # ----- where results go -------------------------------------------------------------------

    def log_line(self: WorkbenchApp, text: str) -> None:
        from workbench.tui.panes.replay_log import ReplayLogPane

        self.pane(ReplayLogPane).write(text)

    def show_job(self: WorkbenchApp) -> None:
        """The running job and its progress on the status line (redrawn with the results)."""
        job = self.jobs.current
        if job is None:
            self.status_bar.job = ""
            return
        count = f" {job.done}/{job.total} {progress_bar(job.done, job.total)}" if job.total \
            else ""
        self.status_bar.job = f"{job.label}{count} esc:cancel"

    def on_job_progress(self: WorkbenchApp, event: JobProgress) -> None:
        self.show_job()

    def on_step_replayed(self: WorkbenchApp, event: StepReplayed) -> None:
        job, result = event.job, event.result
        module_key = job.module_key
        assert module_key is not None
        status = result_status(result)
        self.book.set_step_status(module_key, result.step, status)
        self.log_line(f"{job.label}: {result.step.label} {status.symbol} {result.outcome.text}")
        if self.manual is not None and job.kind == "evaluate":
            self.manual.last_result = (f"{result.step.label}: {status.symbol} "
                                       f"{result.outcome.status}")
            self.query_one(BisectBar).show_state(self.manual)
        self.results_changed(module_key)

    def on_verdict_reached(self: WorkbenchApp, event: VerdictReached) -> None:
        job, verdict = event.job, event.verdict
        module_key = job.module_key
        assert module_key is not None
        self.book.set_module_status(module_key, verdict_status(verdict))
        self.log_line(f"{job.label}: {verdict.status}: {verdict.detail} "
                      f"({verdict.evaluations} evaluations of {verdict.steps} steps)")
        if verdict.culprit is not None:
            culprit = verdict.culprit.step
            self.culprit[module_key] = step_key(culprit)
            module = self.module_by_key(module_key)
            if module is not None:
                execution = next((e for e in module.executions if e.id == job.execution_id),
                                 None)
                self.verdicts[module_key] = (execution, verdict)
            if job.kind == "bisect":
                self.go_to_step(module_key, culprit, open_diff=True)
        self.results_changed(module_key)

    def on_triage_reported(self: WorkbenchApp, event: TriageReported) -> None:
        result = event.result
        self.book.set_module_status(result.module, triage_status(result))
        module = self.module_by_key(result.module)
        if result.culprit is not None and module is not None:
            index = result.culprit["index"]
            if 0 <= index < len(module.steps):
                self.culprit[module.key] = step_key(module.steps[index])
        self.log_line(f"triage {result.name or result.module} ({result.execution}): "
                      f"{result.status}: {result.detail}")
        self.results_changed(result.module)

    def on_job_ended(self: WorkbenchApp, event: JobEnded) -> None:
        job = event.job
        self.jobs.finished(job)
        self.show_job()
        if event.outcome != "done":
            message = f"{job.label}: {event.outcome}{': ' + event.message if event.message else ''}"
            self.log_line(message)
            self.notify(message, severity="error" if event.outcome == "failed" else "warning",
                        timeout=6)
        # Modules still "running" were not reached (cancelled, failed): not replayed after all.
        for key, status in list(self.book.modules.items()):
            if status.state == "running":
                self.book.modules.pop(key)
                self.results_changed(key)

    def go_to_step(self: WorkbenchApp, module_key: str, step: Step,
                   open_diff: bool = False) -> None:
        """Select `step` of module `module_key` in the panes (selecting the module first)."""
        from workbench.tui.panes.diff import DiffPane
        from workbench.tui.panes.modules import ModulesPane
        from workbench.tui.panes.timeline import TimelinePane

        if self.module is None or self.module.key != module_key:
            modules = self.pane(ModulesPane)
            if not modules.table.move_to_key(module_key):
                modules.show_module(module_key)
            self.select_module(module_key)
        timeline = self.pane(TimelinePane)
        timeline.show_step(step)
        self.step_changed()
        if open_diff:
            diff = self.pane(DiffPane)
            diff.first_change_pending = True
            self.action_focus_pane("DiffPane")

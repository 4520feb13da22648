"""The app's replay commands and how their results reach the panes: an object the app owns
and hands its replay keys and job messages to.

`r` replays the selected execution step by step, `b` bisects it, `T` triages every module,
`B` starts a manual bisection (`g`/`b`/`s` mark the proposed step, `e` evaluates it), escape
cancels. Results become `Status`es in the app's book (module badges, timeline results), lines
in the replay log, and a finished bisection lands on its culprit with the diff open.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from workbench.model import Execution, Module
from workbench.replay.backends import NoBackend, open_backend
from workbench.replay.bisect import Mark, Verdict
from workbench.replay.judge.outcome import Kind, Outcome
from workbench.replay.steps import StepResult
from workbench.replay.triage.run import TriageResult
from workbench.tui.bisect_bar import ManualBisect
from workbench.tui.book import step_key
from workbench.tui.jobs import (
    JobEnded,
    JobPhase,
    JobProgress,
    StepReplayed,
    TriageReported,
    VerdictReached,
)
from workbench.tui.panes.iree import IreePane, capture_of
from workbench.tui.status import Status
from workbench.tui.step_names import step_name
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import ControlContext

# The app's own BINDINGS include these (Textual reads bindings from widget classes only), and
# its action methods hand them to the control.
REPLAY_BINDINGS: list[BindingType] = [
    Binding("r", "replay", "Replay", tooltip="Replay every step of the selected execution"),
    Binding("b", "bisect", "Bisect",
            tooltip="Find the culprit step of the selected execution by bisection"),
    Binding("B", "manual_bisect", "By hand",
            tooltip="Bisect by hand: mark proposed steps good, bad or skip"),
    Binding("T", "triage", "Triage",
            tooltip="Bisect every module and execution of the dump in the background"),
    Binding("escape", "cancel", "Cancel", show=False,
            tooltip="Cancel the running job, or stop the manual bisection"),
    # Manual bisection keys: active only while one runs (check_action), ahead of the panes'.
    Binding("g", "bisect_mark('good')", "Good", priority=True),
    Binding("b", "bisect_mark('bad')", "Bad", priority=True),
    Binding("s", "bisect_mark('skip')", "Skip", priority=True),
    Binding("e", "bisect_evaluate", "Evaluate", priority=True),
    Binding("escape", "bisect_stop", "Stop bisect", priority=True),
]
MODAL_ACTIONS = {"bisect_mark", "bisect_evaluate"}
STATE_WORDS = {Kind.MISMATCH: "failing", Kind.OK: "ok", Kind.UNSUPPORTED: "unsupported",
               Kind.ERROR: "error"}


def result_status(result: StepResult) -> Status:
    return Status.of(result.outcome)


NOTICE_WIDTH = 90  # a job's failure longer than this is noticed in short, read in the Log


def verdict_status(verdict: Verdict) -> Status:
    """A module's badge from a bisection verdict: `✗ #30 fusion in …` (the culprit named as
    the timeline rows name it), `? sort`, `✓`."""
    if verdict.culprit is not None and verdict.outcome.kind == Kind.MISMATCH:
        return Status.of(replace(verdict.outcome, culprit=step_name(verdict.culprit.step)))
    return Status.of(verdict.outcome)


def triage_status(result: TriageResult) -> Status:
    status = Status.of(result.outcome) if result.verdict is None else verdict_status(
        result.verdict)
    return replace(status, cached=result.cached)


def triage_summary(tally: Counter[str]) -> str:
    """The line a triage ends with: how many executions, by state, and how many cached."""
    total = sum(tally[state] for state in STATE_WORDS)
    parts = [f"{tally[state]} {word}" for state, word in STATE_WORDS.items() if tally[state]]
    cached = f"; {tally['cached']} from the results cache" if tally["cached"] else ""
    return f"triage done: {plural(total, 'execution')} ({', '.join(parts) or 'none'}){cached}"


class ReplayControl:
    """Replay, bisection (automatic and by hand) and triage for the app, which hands it the
    actions of `REPLAY_BINDINGS` and the job messages; `manual` is the manual bisection under
    way."""

    def __init__(self, app: ControlContext) -> None:
        self.app = app
        self.manual: ManualBisect | None = None
        self.triage_tally: Counter[str] = Counter()  # results of the running triage by state

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "bisect_stop":  # escape says what it does while a bisection is open
            from textual.widgets import Input

            return self.manual is not None and not isinstance(self.app.focused, Input)
        if action in MODAL_ACTIONS:
            # Modal keys: only while a manual bisection proposes a step, never while typing;
            # once it has ended, `b` and the others are the usual keys again.
            from textual.widgets import Input

            return self.manual is not None and self.manual.proposal is not None and \
                not isinstance(self.app.focused, Input)
        return True

    # ----- starting jobs ----------------------------------------------------------------------

    def _selected(self) -> tuple[Module, Execution | None] | None:
        from workbench.tui.panes.executions import ExecutionsPane
        from workbench.tui.panes.modules import ModulesPane

        app, selection = self.app, self.app.selection
        listed = app.pane(ModulesPane).table.current_key
        if listed is not None and (selection.module is None or selection.module.key != listed):
            app.select_module(listed)  # a key pressed before the selection settled
        if selection.module is None:
            app.notify("select a module first", timeout=3)
            return None
        selection.execution = app.pane(ExecutionsPane).current  # settled or not
        return selection.module, selection.execution_or_first()

    def _mark_running(self, module: Module) -> None:
        self.app.book.clear_module(module.key)
        self.app.culprit.pop(module.key, None)
        self.app.book.set_module_status(module.key, Status("running"))
        self.app.results_changed(module.key)

    def action_replay(self) -> None:
        selected = self._selected()
        if selected and capture_of(selected[1]) is not None:
            # An IREE capture has no steps: IREE's own tool replays it whole, in its pane.
            self.app.action_focus_pane(IreePane.__name__)
            self.app.call_after_refresh(self.app.pane(IreePane).action_replay)
            return
        if selected and not self._refuse_misfit(*selected) and \
                self.app.jobs.replay(*selected, bisect=False):
            self._mark_running(selected[0])
            self._say_if_fake(*selected)

    def _refuse_misfit(self, module: Module, execution: Execution | None) -> bool:
        """A recording known not to fit the module (the Executions pane checked it when the
        module was selected) is not replayed: said, with the first mismatch, instead of a
        job that would fail on it."""
        from workbench.tui.panes.executions import ExecutionsPane

        fit = self.app.pane(ExecutionsPane).misfit(execution)
        if fit is None or execution is None:
            return False
        name = module.name or module.key
        self.app.log_line(f"{name}: not replayed: {execution.id} does not fit the module: "
                          f"{'; '.join(fit.misfits)}")
        self.app.notify(f"not replayed: {execution.id} does not fit {name} "
                        f"({fit.misfits[0]}; see Executions, 2)", severity="warning",
                        timeout=8)
        return True

    def action_bisect(self) -> None:
        selected = self._selected()
        if selected and capture_of(selected[1]) is not None:
            self.app.notify("an IREE capture has no passes to bisect; r replays it whole",
                            timeout=4)
            return
        if selected and not self._refuse_misfit(*selected) and \
                self.app.jobs.replay(*selected, bisect=True):
            self._mark_running(selected[0])
            self._say_if_fake(*selected)

    def _say_if_fake(self, module: Module, execution: Execution | None) -> None:
        """A module without a recorded execution is replayed on made-up inputs: its verdict
        says whether the passes agree with each other, not whether the real run's numbers
        were right. Said plainly, where it stays (the Log) and at once (a notice)."""
        if execution is not None:
            return
        name = module.name or module.key
        self.app.log_line(
            f"{name}: no recorded execution, so this runs on FAKE DATA (made-up inputs): it "
            "finds a pass that changes the numbers, not whether the real run's were right. "
            "Recorded inputs: a dump with HLO snapshots (--xla_dump_hlo_snapshots), or "
            "workbench DIR --recorded IO_DIR.")
        self.app.notify(f"{name}: no recorded execution: running on fake data (see the Log, 8)",
                        severity="warning", timeout=6)

    def action_triage(self) -> None:
        self.triage_tally = Counter()
        if self.app.jobs.triage():
            for module in self.app.dump.modules:
                if module.executions:
                    self._mark_running(module)

    def action_cancel(self) -> None:
        if self.app.jobs.cancel():
            self.app.notify("cancelling…", timeout=2)
        elif self.manual is not None:
            self.manual = None
            self.app.bisect_bar.show_state(None)
            self.app.refresh_bindings()

    # ----- manual bisection -------------------------------------------------------------------

    def action_manual_bisect(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        module, execution = selected
        try:
            steps = open_backend(self.app.dump.root, module).steps()
        except NoBackend as error:
            self.app.notify(str(error), severity="error", timeout=5)
            return
        if len(steps) < 2:
            self.app.notify("nothing to bisect: fewer than two replayable steps", timeout=4)
            return
        self.manual = ManualBisect.start(module.key, module.name or module.key, execution, steps)
        self._bisect_moved()

    def _bisect_moved(self) -> None:
        app, manual = self.app, self.manual
        assert manual is not None
        app.bisect_bar.show_state(manual)
        app.refresh_bindings()
        proposal = manual.proposal
        if proposal is not None:  # its diff, at what the step changed: what is to be judged
            app.go_to_step(manual.module_key, proposal, open_diff=True)
            return
        culprit = manual.culprit
        if culprit is not None:
            outcome = Outcome(Kind.MISMATCH, culprit=step_name(culprit))
            app.book.set_module_status(manual.module_key, Status.of(outcome))
            app.culprit[manual.module_key] = step_key(culprit)
            app.results_changed(manual.module_key)
            app.go_to_step(manual.module_key, culprit, open_diff=True)
        app.log_line(f"manual bisect {manual.module_name}: {manual.outcome()}")

    def action_bisect_mark(self, mark: Mark) -> None:
        manual = self.manual
        if manual is None or manual.proposal is None:
            return
        error = manual.mark(self.app.selection.step, mark)
        if error:
            self.app.notify(error, severity="warning", timeout=4)
            return
        self._bisect_moved()

    def action_bisect_evaluate(self) -> None:
        manual, selection = self.manual, self.app.selection
        if manual is None or selection.module is None:
            return
        step = selection.step if manual.position_of(selection.step) is not None \
            else manual.proposal
        if step is not None:
            self.app.jobs.evaluate(selection.module, manual.execution, step)

    # ----- where results go -------------------------------------------------------------------

    def on_job_progress(self, event: JobProgress) -> None:
        self.app.show_job()

    def on_job_phase(self, event: JobPhase) -> None:
        """An evaluation starts: the status line says which, and the timeline marks the
        step's row (a stage of the judgment keeps the mark on the step it judges)."""
        app, job = self.app, event.job
        job.phase = event.phase.describe() if event.step is None else (
            f"{event.phase.what} {step_name(event.step)}")  # `random rounding sample 3 of 12`
        if event.step is not None and job.module_key is not None:
            self._mark_evaluating((job.module_key, step_key(event.step)))
        app.show_job()

    def _mark_evaluating(self, row: tuple[str, str] | None) -> None:
        app, before = self.app, self.app.evaluating
        app.evaluating = row
        for changed in {marked[0] for marked in (before, row) if marked is not None}:
            app.results_changed(changed)

    def on_step_replayed(self, event: StepReplayed) -> None:
        app, job, result = self.app, event.job, event.result
        module_key = job.module_key
        assert module_key is not None
        if app.evaluating == (module_key, step_key(result.step)):
            app.evaluating = None  # its result replaces the mark
        status = result_status(result)
        app.book.set_step_status(module_key, result.step, status)
        app.log_line(f"{job.label}: {step_name(result.step)} {status.symbol} "
                     f"{result.outcome.text}")
        if self.manual is not None and job.kind == "evaluate":
            self.manual.last_result = (f"{step_name(result.step)}: {status.symbol} "
                                       f"{result.outcome.status}")
            app.bisect_bar.show_state(self.manual)
        app.results_changed(module_key)

    def on_verdict_reached(self, event: VerdictReached) -> None:
        app, job, verdict = self.app, event.job, event.verdict
        module_key = job.module_key
        assert module_key is not None
        app.book.set_module_status(module_key, verdict_status(verdict))
        found = f"{job.label}: {verdict.status}: {verdict.detail}"
        app.log_line(f"{found} ({plural(verdict.evaluations, 'evaluation')} of "
                     f"{plural(verdict.steps, 'step')})")
        app.offer_copy(found)
        if verdict.culprit is not None:
            culprit = verdict.culprit.step
            app.culprit[module_key] = step_key(culprit)
            module = app.module_by_key(module_key)
            if module is not None:
                execution = next((e for e in module.executions if e.id == job.execution_id),
                                 None)
                app.verdicts[module_key] = (execution, verdict)
            if job.kind == "bisect":
                app.go_to_step(module_key, culprit, open_diff=True)
        app.results_changed(module_key)

    def on_triage_reported(self, event: TriageReported) -> None:
        app, result = self.app, event.result
        app.book.set_module_status(result.module, triage_status(result))
        module = app.module_by_key(result.module)
        if result.culprit is not None and module is not None:
            index = result.culprit.index
            if 0 <= index < len(module.steps):
                app.culprit[module.key] = step_key(module.steps[index])
            if result.verdict is not None:  # L localizes from it, as after a bisection
                execution = next((e for e in module.executions if e.id == result.execution),
                                 None)
                app.verdicts[module.key] = (execution, result.verdict)
        if event.job.kind == "triage" and event.job.label == "triage":  # this run's, counted
            self.triage_tally[result.status] += 1
            self.triage_tally["cached"] += result.cached
        cached = " (cached)" if result.cached else ""
        app.log_line(f"triage {result.name or result.module} ({result.execution}): "
                     f"{result.status}: {result.detail}{cached}")
        app.results_changed(result.module)

    def on_job_ended(self, event: JobEnded) -> None:
        app, job = self.app, event.job
        app.jobs.finished(job)
        self._mark_evaluating(None)
        app.show_job()
        if job.kind == "triage":
            summary = triage_summary(self.triage_tally)
            if event.outcome == "done":
                app.notify(summary, timeout=8)
            else:  # the notice below says it ended early; the log keeps what it found
                summary = summary.replace("triage done", f"triage {event.outcome}", 1)
            app.log_line(summary)
        if event.outcome != "done":
            message = f"{job.label}: {event.outcome}{': ' + event.message if event.message else ''}"
            app.log_line(message)
            # In full in the Log, which wraps it (a recording that does not fit the module lists
            # every type); the notice is one line, so it never covers the screen.
            first, _, more = message.partition("\n")
            long = bool(more) or len(first) > NOTICE_WIDTH
            if long:
                first = first if len(first) <= NOTICE_WIDTH else first[:NOTICE_WIDTH - 1] + "…"
            app.notify(f"{first} (in full in the Log, 8)" if long else message,
                       severity="error" if event.outcome == "failed" else "warning", timeout=6)
            if event.outcome == "failed" and long:
                app.action_focus_pane("ReplayLogPane")
        # Modules still "running" were stopped (cancelled, failed): what was evaluated before
        # is said (`· stopped: 19 of 84 steps evaluated, 19 ✓`); one not reached is not replayed.
        for key, status in list(app.book.modules.items()):
            if status.state == "running":
                done = [s for (module_key, _), s in app.book.steps.items() if module_key == key]
                if done:
                    ok = sum(1 for s in done if s.state == Kind.OK)
                    total = f" of {job.total}" if job.total and job.module_key == key else ""
                    app.book.set_module_status(key, Status(
                        "stopped", f"{event.outcome} after "
                        f"{plural(len(done), 'step')}{total} evaluated, {ok} ✓"))
                else:
                    app.book.modules.pop(key)
                app.results_changed(key)

"""The replay control without the app: it knows the app only as a `ControlContext`, so a plain
object that records its requests stands in for it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.replay_fakes import FakeBackend, make_module
from workbench.model import Dump, Module, Step
from workbench.replay.bisect import bisect_replay
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.judge.culprit import Culprit
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import Replay
from workbench.replay.triage.run import TriageResult
from workbench.tui.bisect_bar import ManualBisect
from workbench.tui.book import Book, step_key
from workbench.tui.context import Selection
from workbench.tui.jobs import Job, JobEnded, Jobs, TriageReported
from workbench.tui.replay_control import ReplayControl
from workbench.tui.status import Status


class Recorder:
    """The app as the controls see it: state, and every request written down."""

    def __init__(self, module: Module) -> None:
        self.dump = Dump(root=Path("/nonexistent"), modules=[module])
        self.book = Book()
        self.selection = Selection(module=module)
        self.marked: dict[str, str] = {}
        self.culprit: dict[str, str] = {}
        self.evaluating: tuple[str, str] | None = None
        self.verdicts: dict = {}
        self.jobs = Jobs(self)
        self.focused = None
        self.bisect_bar = self  # `show_state` below
        self.shown: list[ManualBisect | None] = []
        self.log: list[str] = []
        self.notices: list[tuple[str, str]] = []
        self.changed: list[str] = []
        self.visits: list[tuple[str, str, bool]] = []

    def show_state(self, bisect: ManualBisect | None) -> None:
        self.shown.append(bisect)

    def log_line(self, text: str) -> None:
        self.log.append(text)

    def offer_copy(self, text: str) -> None:
        self.copyable = text

    def notify(self, message: str, *, severity: str = "information", **_: object) -> None:
        self.notices.append((severity, message))

    def results_changed(self, module_key: str) -> None:
        self.changed.append(module_key)

    def module_by_key(self, key: str | None) -> Module | None:
        return next((m for m in self.dump.modules if m.key == key), None)

    def go_to_step(self, module_key: str, step: Step, open_diff: bool = False) -> None:
        self.visits.append((module_key, step.pass_name, open_diff))
        self.selection.step = step

    def show_job(self) -> None:
        pass

    def refresh_bindings(self) -> None:
        pass


def test_a_triage_result_becomes_a_badge_a_culprit_and_a_log_line() -> None:
    module = make_module("good good bad bad")
    app = Recorder(module)
    control = ReplayControl(app)
    backend = FakeBackend(Path("/nonexistent"), module)
    verdict = bisect_replay(Replay(backend, resolve_inputs(backend, module.executions[0],
                                                           InputSpec())))
    assert verdict.culprit is not None
    result = TriageResult(module.key, "jit_fake", "snapshot.1", verdict.status,
                          culprit=Culprit.of_step(verdict.culprit.step),
                          detail=verdict.detail, verdict=verdict)
    job = Job("triage", "triage")
    control.on_triage_reported(TriageReported(job, result))
    status = app.book.module_status(module.key)
    assert (status.state, status.detail) == (Kind.MISMATCH, "#2 bad")
    assert app.culprit == {module.key: step_key(module.steps[2])}
    assert app.log == [f"triage jit_fake (snapshot.1): mismatch: {verdict.detail}"]
    assert "step 2 (0002 bad) is the first to differ" in app.log[0]
    assert app.changed == [module.key]

    app.book.set_module_status("module_0002", Status("running"))  # not reached
    app.jobs.current = job
    control.on_job_ended(JobEnded(job, "cancelled"))
    assert app.jobs.current is None and "module_0002" not in app.book.modules
    assert app.book.module_status(module.key).state == Kind.MISMATCH  # reached: kept
    assert app.notices == [("warning", "triage: cancelled")]
    assert "triage cancelled: 1 execution (1 failing)" in app.log


def test_manual_bisection_marks_until_the_culprit() -> None:
    module = make_module("good good good bad bad")
    app = Recorder(module)
    control = ReplayControl(app)
    assert not control.check_action("bisect_mark", ("good",))  # no manual bisection yet
    assert control.check_action("replay", ())
    control.manual = ManualBisect.start(module.key, "jit_fake", None, module.steps)
    assert control.check_action("bisect_mark", ("good",))
    app.selection.step = control.manual.proposal
    while control.manual.proposal is not None:
        step = app.selection.step
        assert step is not None
        control.action_bisect_mark("bad" if step.pass_name == "bad" else "good")
    assert app.visits[-1] == (module.key, "bad", True)  # the culprit, its diff open
    assert all(open_diff for _, _, open_diff in app.visits)  # each at its change
    assert app.culprit == {module.key: step_key(module.steps[3])}
    status = app.book.module_status(module.key)
    assert (status.state, status.detail) == (Kind.MISMATCH, "#3 bad")
    assert app.log == ["manual bisect jit_fake: culprit: #3 bad"]
    assert app.shown[-1] is control.manual


def test_a_forgotten_replay_is_closed_with_the_app() -> None:
    """A module whose files changed drops its cached replays (the next job opens a fresh
    one), but a job may still run the old one: it is closed when the app closes its jobs, so
    what it keeps on disk (a worker's range of the result) goes with it."""
    module = make_module("good bad")
    app = Recorder(module)
    backend = FakeBackend(Path("/nonexistent"), module)
    replay = Replay(backend, resolve_inputs(backend, module.executions[0], InputSpec()))
    closed: list[Replay] = []
    replay.close = lambda: closed.append(replay)  # type: ignore[method-assign]  # counted
    app.jobs._replays[(module.key, None)] = replay
    app.jobs.forget(module.key)
    assert app.jobs._replays == {} and closed == []
    app.jobs.close()
    assert closed == [replay]

"""Replay jobs of the app: replay an execution, bisect it, triage every module, evaluate one
step (manual bisection, the debugger), all in the background.

A job runs in a Textual thread worker that only waits: evaluations run in worker processes
(`workbench.replay`), which a cancel request or a time limit kills, so the event loop keeps
drawing and answering keys however long an evaluation holds its interpreter. One job runs at
a time; its progress and results come back as messages the app handles.

Replays are kept per (module, execution) so stepping and manual bisection evaluate a step
once; a live change to a module's files drops its replays.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from textual.message import Message

from workbench.model import Dump, Execution, Module, Step
from workbench.replay.backends import NoBackend
from workbench.replay.bisect import Verdict, bisect_replay
from workbench.replay.inputs import InputError, InputSpec
from workbench.replay.processes.workers import Cancelled, WorkerPool, default_jobs, start_helpers
from workbench.replay.progress import ReplayPhase
from workbench.replay.steps import ProcessRunner, Replay, StepResult, open_replay
from workbench.replay.triage.results_cache import ResultsCache, UnsafeCache, default_cache_dir
from workbench.replay.triage.run import TriageOptions, TriageResult, cached_results, triage
from workbench.sources import ReadError
from workbench.tui.step_names import step_name


class JobsHost(Protocol):
    """What jobs need of the app: the model, and Textual's messages, workers and notices."""

    dump: Dump

    def notify(self, message: str, *, severity: Any = ..., timeout: float | None = ...,
               markup: bool = ...) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def run_worker(self, work: Callable[[], None], *, thread: bool = ..., group: str = ...,
                   exit_on_error: bool = ..., name: str | None = ...) -> Any: ...

STEP_TIME_LIMIT = 120.0  # seconds one step's evaluation may take before it is stopped
WORKER_NICE = 10  # evaluations run at a lower priority than the UI, so keys stay answered


@dataclass
class Job:
    kind: str  # "replay", "bisect", "triage", "evaluate", "debug"
    label: str
    module_key: str | None = None
    execution_id: str | None = None
    total: int = 0
    done: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    first_done: float | None = None  # when the first result came (the reference's cost is
    # paid before it: reading, parsing, the first evaluation), the clock for the time left
    phase: str = ""  # the evaluation running now, as the status line says it (`JobPhase`)

    def time_left(self, now: float) -> float | None:
        """Seconds left at the pace of the results so far; None before two results."""
        if self.first_done is None or self.done < 2 or not self.total:
            return None
        pace = (now - self.first_done) / (self.done - 1)
        return pace * max(self.total - self.done, 0)


class JobMessage(Message):
    def __init__(self, job: Job) -> None:
        super().__init__()
        self.job = job


class JobProgress(JobMessage):
    """`job.done` / `job.total` moved."""


class JobPhase(JobMessage):
    """An evaluation of the job starts: `phase` says what it is (`progress.py`); `step` is
    the step it evaluates, None for a stage of the judgment (the f64 truth, the noise)."""

    def __init__(self, job: Job, phase: ReplayPhase, step: Step | None) -> None:
        super().__init__(job)
        self.phase = phase
        self.step = step


class StepReplayed(JobMessage):
    """One step's replay result (streamed as evaluations finish)."""

    def __init__(self, job: Job, result: StepResult) -> None:
        super().__init__(job)
        self.result = result


class VerdictReached(JobMessage):
    """A bisection (or a full replay) of one execution ended."""

    def __init__(self, job: Job, verdict: Verdict) -> None:
        super().__init__(job)
        self.verdict = verdict


class TriageReported(JobMessage):
    """One module x execution of a triage finished."""

    def __init__(self, job: Job, result: TriageResult) -> None:
        super().__init__(job)
        self.result = result


class JobEnded(JobMessage):
    """The job is over: `outcome` is "done", "cancelled" or "failed" (`message` says why)."""

    def __init__(self, job: Job, outcome: str, message: str = "") -> None:
        super().__init__(job)
        self.outcome = outcome
        self.message = message


class Jobs:
    """Starts jobs for the app; at most one at a time."""

    def __init__(self, app: JobsHost) -> None:
        self.app = app
        self.current: Job | None = None
        self._replays: dict[tuple[str, str | None], Replay] = {}
        self._stale: list[Replay] = []  # forgotten, closed with the app (`forget`)
        self._pool: WorkerPool | None = None

    @property
    def busy(self) -> bool:
        return self.current is not None

    def _start(self, job: Job, body: Callable[[Job], None]) -> bool:
        if self.current is not None:
            self.app.notify(f"{self.current.label} is running (escape cancels it)",
                            severity="warning", timeout=3)
            return False
        self.current = job
        self.app.post_message(JobProgress(job))

        def run() -> None:
            try:
                body(job)
            except Cancelled:
                self.app.post_message(JobEnded(job, "cancelled"))
            except (NoBackend, InputError, ReadError) as error:
                self.app.post_message(JobEnded(job, "failed", str(error)))
            except Exception as error:  # an engine bug: report it, keep the app alive
                self.app.post_message(JobEnded(job, "failed", f"{type(error).__name__}: {error}"))
            else:
                self.app.post_message(JobEnded(job, "cancelled" if job.cancel.is_set()
                                               else "done"))

        self.app.run_worker(run, thread=True, group="job", exit_on_error=False,
                            name=job.label)
        return True

    def finished(self, job: Job) -> None:
        """The app saw `JobEnded`: the next job may start."""
        if self.current is job:
            self.current = None

    def cancel(self) -> bool:
        if self.current is None:
            return False
        self.current.cancel.set()
        return True

    def close(self) -> None:
        self.cancel()
        for replay in [*self._replays.values(), *self._stale]:
            replay.close()
        self._replays.clear()
        self._stale.clear()
        if self._pool is not None:
            self._pool.close()

    def forget(self, module_key: str) -> None:
        """A module's files changed: its cached replays are stale (closed with the app: a job
        may still be running one)."""
        for key in [k for k in self._replays if k[0] == module_key]:
            self._stale.append(self._replays.pop(key))

    # ----- replays ----------------------------------------------------------------------------

    def replay_of(self, module: Module, execution: Execution | None, job: Job) -> Replay:
        """The cached replay of `module` on `execution` (fake data when None), opened on first
        use; evaluations go to the shared worker process and honour `job`'s cancel event."""
        key = (module.key, execution.id if execution else None)
        replay = self._replays.get(key)
        if replay is None:
            if self._pool is None:
                start_helpers()
                self._pool = WorkerPool(1, nice=WORKER_NICE)
            runner = ProcessRunner(STEP_TIME_LIMIT, pool=self._pool)
            spec = InputSpec(fake_data=execution is None)
            replay = open_replay(self.app.dump.root, module, execution, spec, runner=runner,
                                 cancel=job.cancel)
            self._replays[key] = replay
        replay.cancel = job.cancel

        def on_phase(phase: ReplayPhase) -> None:
            position = phase.position
            step = replay.steps[position] if position is not None and \
                0 <= position < len(replay.steps) else None
            self.app.post_message(JobPhase(job, phase, step))

        replay.on_phase = on_phase
        return replay

    def _stream(self, job: Job) -> Callable[[StepResult], None]:
        def on_result(result: StepResult) -> None:
            job.done += 1
            if job.first_done is None:
                job.first_done = time.monotonic()
            self.app.post_message(StepReplayed(job, result))

        return on_result

    def replay(self, module: Module, execution: Execution | None, bisect: bool) -> bool:
        """Replay every step (or bisect) of `module` on `execution`, streaming results."""
        kind = "bisect" if bisect else "replay"
        target = execution.id if execution else "fake data"
        job = Job(kind, f"{kind} {module.name or module.key} ({target})", module.key,
                  execution.id if execution else None)

        def body(job: Job) -> None:
            replay = self.replay_of(module, execution, job)
            job.total = len(replay.steps)
            on_result = self._stream(job)
            if bisect:
                verdict = bisect_replay(replay, on_result=on_result)
            else:
                verdict = bisect_replay(replay, linear=True, on_result=on_result)
            self.app.post_message(VerdictReached(job, verdict))

        return self._start(job, body)

    def evaluate(self, module: Module, execution: Execution | None, step: Step) -> bool:
        """Evaluate one step (and the reference first, when not yet done)."""
        job = Job("evaluate", f"evaluate {step_name(step)}", module.key,
                  execution.id if execution else None, total=1)

        def body(job: Job) -> None:
            replay = self.replay_of(module, execution, job)
            position = next((p for p, s in enumerate(replay.steps) if s.index == step.index),
                            None)
            if position is None:
                raise NoBackend(f"{step_name(step)} is not a replayable step of {module.key}")
            on_result = self._stream(job)
            if position != 0 and 0 not in replay.results:
                on_result(replay.evaluate(0))
            on_result(replay.evaluate(position))

        return self._start(job, body)

    def run_in_background(self, label: str, module: Module, execution: Execution | None,
                          work: Callable[[Job, Replay], None], kind: str = "debug") -> bool:
        """Run `work(job, replay)` as a job (the debugger's stepping commands)."""
        job = Job(kind, label, module.key, execution.id if execution else None)
        return self._start(job, lambda job: work(job, self.replay_of(module, execution, job)))

    def triage(self) -> bool:
        """Bisect every module x execution of the dump in worker processes."""
        dump = self.app.dump
        job = Job("triage", "triage", total=sum(len(m.executions) for m in dump.modules))

        def body(job: Job) -> None:
            start_helpers()

            def on_result(result: TriageResult) -> None:
                job.done += 1
                self.app.post_message(TriageReported(job, result))

            triage(dump, TriageOptions(), jobs=default_jobs(), time_limit=STEP_TIME_LIMIT * 4,
                   on_result=on_result, cancel=job.cancel, nice=WORKER_NICE,
                   cache=self._results_cache())

        return self._start(job, body)

    def _results_cache(self) -> ResultsCache | None:
        """The user's results cache; None, with a warning, when others could write to it."""
        try:
            return ResultsCache(default_cache_dir())
        except UnsafeCache as error:
            self.app.notify(str(error), severity="warning", markup=False, timeout=10)
            return None

    def show_cached_triage(self) -> None:
        """Report the triage results the results cache holds for the dump (badges at once when
        a dump is reopened), evaluating nothing; not a job, so it never blocks one."""
        dump = self.app.dump
        job = Job("triage", "cached triage results")

        def run() -> None:
            cache = self._results_cache()
            for result in [] if cache is None else cached_results(dump, cache):
                self.app.post_message(TriageReported(job, result))

        self.app.run_worker(run, thread=True, group="cached-triage", exit_on_error=False)

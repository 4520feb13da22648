"""Run functions in worker processes that can be stopped: time limits and cancellation.

Interpreting IR holds the GIL for seconds at a time, so a thread cannot be interrupted and
would stall a UI. Evaluations that must honour a time limit or a cancel request run here,
in long-lived worker processes (imports and the loader's caches stay warm between calls):
a worker that runs past its limit, or whose call is cancelled, is killed and replaced.

Workers come from the `forkserver` start method where the platform has it (safe when the
parent runs threads, as the TUI does), `spawn` elsewhere. Functions and arguments travel by
pickle, so functions must be importable module-level names.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# Imported once by the fork server, so each worker starts with them loaded.
PRELOAD = ["numpy", "workbench.replay.steps", "workbench.replay.triage.run"]
POLL_SECONDS = 0.05  # how often a waiting parent looks at its cancel event
# Settings a call runs under, sent with every call: a worker may have been started before the
# parent changed them (the fork server keeps the environment it started with).
# replay.memory.ENVIRONMENT_VARIABLE, sources.READ_LIMIT_VARIABLE, FOLLOW_LINKS_VARIABLE
FORWARDED_ENVIRONMENT = ("WORKBENCH_MEMORY_LIMIT", "WORKBENCH_READ_LIMIT",
                         "WORKBENCH_FOLLOW_LINKS")


class Cancelled(Exception):
    """The caller asked to stop; whatever was running was killed."""


# Where `report` sends what the running call says of how far it is: to the parent, in a
# worker (`_worker_main`); to the caller's function, in its own process (`reporting`).
_REPORTER: ContextVar[Callable[[Any], None] | None] = ContextVar("reporter", default=None)
_PROGRESS = "progress"  # a worker's message that is not its call's reply


def report(message: Any) -> None:
    """Tell whoever waits for the running call how far it is (`message`, picklable): the
    call's `progress` in the parent when it runs in a worker, or the function `reporting`
    set in this process; nothing when no one listens."""
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter(message)


@contextlib.contextmanager
def reporting(to: Callable[[Any], None] | None) -> Iterator[None]:
    """`report` calls `to` meanwhile, in this thread (a call run in this process)."""
    token = _REPORTER.set(to)
    try:
        yield
    finally:
        _REPORTER.reset(token)


@dataclass
class Call:
    """One function call to run in a worker: `function(*args)`; `progress` hears what it
    `report`s as it runs."""

    key: Hashable
    function: Callable[..., Any]
    args: tuple = ()
    progress: Callable[[Any], None] | None = None


@dataclass
class Outcome:
    """How a call ended. Exactly one of: a value, an error (the traceback text), a time-out,
    a cancellation."""

    key: Hashable
    value: Any = None
    error: str | None = None
    timed_out: bool = False
    cancelled: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.cancelled


@cache
def _context() -> multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def start_helpers() -> None:
    """Start multiprocessing's helper processes (resource tracker, fork server) now.

    They are started with the parent's stderr file descriptor. A full-screen UI replaces
    `sys.stderr` while it runs with an object that has none, and starting them from inside it
    fails ("bad value(s) in fds_to_keep"); a UI calls this before its first worker starts.
    """
    from multiprocessing import forkserver, resource_tracker

    with contextlib.redirect_stderr(sys.__stderr__ or sys.stderr):
        resource_tracker.ensure_running()
        if _context().get_start_method() == "forkserver":
            forkserver.ensure_running()


def _die_with_parent() -> None:
    """Have the kernel kill this worker when its parent ends, however the parent ends.

    A worker busy in numpy does not read its pipe, so it would not notice a parent killed by
    SIGTERM or SIGKILL and would compute on, re-parented to init. Its parent is the fork
    server, which exits once no process holds its "alive" pipe; every child it forks inherits
    that pipe (multiprocessing keeps the server up while its children live), so a worker
    closes its copy: then the server ends with the command, and the kernel ends the worker.
    Linux only (prctl PR_SET_PDEATHSIG); elsewhere the pipe's end-of-file stops idle workers.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if server is not None and alive is not None:
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


def _worker_main(conn: multiprocessing.connection.Connection, nice: int = 0) -> None:
    _die_with_parent()
    # Ctrl-C in a terminal reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        key, function, args, environment = message
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        start = time.perf_counter()
        try:
            with reporting(lambda message: conn.send((_PROGRESS, message))):
                reply: tuple = (key, True, function(*args))
        except BaseException:
            reply = (key, False, traceback.format_exc())
        elapsed = time.perf_counter() - start
        try:
            conn.send((*reply, elapsed))
        except (EOFError, OSError):
            return
        except Exception as error:  # the value could not be pickled
            conn.send((key, False, f"result could not be sent back: {error!r}", elapsed))


@dataclass(eq=False)
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    call: Call | None = None
    started: float = 0.0
    deadline: float | None = None

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


@dataclass
class WorkerPool:
    """Up to `workers` processes, started on first use and reused until `close()`.

    One pool runs one batch at a time (`run` or `call`); it is not meant to be shared between
    threads that call it concurrently.
    """

    workers: int = 1
    nice: int = 0  # added to the workers' niceness: an interactive parent keeps the CPU
    _idle: list[_Worker] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("a pool needs at least one worker")

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the idle workers (busy ones are stopped by the `run` that owns them)."""
        while self._idle:
            worker = self._idle.pop()
            with contextlib.suppress(OSError):
                worker.conn.send(None)
            worker.process.join(timeout=1)
            worker.kill()

    def _start(self) -> _Worker:
        context = _context()
        parent_conn, child_conn = context.Pipe()
        process = context.Process(target=_worker_main, args=(child_conn, self.nice), daemon=True,
                                  name="workbench-replay-worker")
        process.start()
        child_conn.close()
        return _Worker(process, parent_conn)

    def _dispatch(self, call: Call, time_limit: float | None) -> _Worker:
        for _attempt in range(2):
            worker = self._idle.pop() if self._idle else self._start()
            try:
                environment = {name: os.environ.get(name) for name in FORWARDED_ENVIRONMENT}
                worker.conn.send((call.key, call.function, call.args, environment))
            except (OSError, EOFError):  # the idle worker died meanwhile: use a new one
                worker.kill()
                continue
            worker.call = call
            worker.started = time.monotonic()
            worker.deadline = None if time_limit is None else worker.started + time_limit
            return worker
        raise RuntimeError("could not start a worker process")

    def call(self, function: Callable[..., Any], *args: Any, time_limit: float | None = None,
             cancel: threading.Event | None = None,
             progress: Callable[[Any], None] | None = None) -> Outcome:
        """Run one call; raise `Cancelled` if `cancel` was set before it finished. `progress`
        hears what the call `report`s as it runs."""
        outcomes = self.run([Call(None, function, args, progress)], time_limit=time_limit,
                            cancel=cancel)
        if outcomes[0].cancelled:
            raise Cancelled()
        return outcomes[0]

    def run(self, calls: Iterable[Call], on_outcome: Callable[[Outcome], None] | None = None,
            time_limit: float | None = None,
            cancel: threading.Event | None = None,
            at_once: int | None = None) -> list[Outcome]:
        """Run `calls` on the pool's workers; outcomes in the order they finish.

        `on_outcome` sees each outcome as soon as it is known (streaming). `time_limit` is per
        call, in seconds. When `cancel` is set, running calls are killed and every call not
        finished yet ends as cancelled. `at_once` runs fewer calls at a time than the pool
        has workers (what fits in memory).
        """
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("this worker pool is already running a batch")
        width = self.workers if at_once is None else max(1, min(at_once, self.workers))
        try:
            return self._run(deque(calls), on_outcome, time_limit, cancel, width)
        finally:
            self._lock.release()

    def _run(self, pending: deque[Call], on_outcome: Callable[[Outcome], None] | None,
             time_limit: float | None, cancel: threading.Event | None,
             width: int) -> list[Outcome]:
        outcomes: list[Outcome] = []
        busy: list[_Worker] = []

        def finish(outcome: Outcome) -> None:
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

        try:
            while pending or busy:
                if cancel is not None and cancel.is_set():
                    break
                while pending and len(busy) < width:
                    busy.append(self._dispatch(pending.popleft(), time_limit))
                now = time.monotonic()
                deadlines = [w.deadline for w in busy if w.deadline is not None]
                timeout = max(0.0, min(deadlines) - now) if deadlines else None
                if cancel is not None:
                    timeout = POLL_SECONDS if timeout is None else min(timeout, POLL_SECONDS)
                waitables: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
                ready = set(multiprocessing.connection.wait(waitables, timeout))
                for worker in list(busy):
                    call = worker.call
                    assert call is not None
                    if worker.conn in ready or worker.process.sentinel in ready:
                        outcome = self._receive(worker, call)
                        if outcome is None:  # it said how far it is, and runs on
                            continue
                        busy.remove(worker)
                        finish(outcome)
                    elif worker.deadline is not None and time.monotonic() >= worker.deadline:
                        busy.remove(worker)
                        worker.kill()
                        finish(Outcome(call.key, timed_out=True,
                                       seconds=time.monotonic() - worker.started))
        finally:
            # Cancelled, or the caller's callback raised: stop what runs, report what is left.
            for worker in busy:
                worker.kill()
                assert worker.call is not None
                outcomes.append(Outcome(worker.call.key, cancelled=True,
                                        seconds=time.monotonic() - worker.started))
            outcomes.extend(Outcome(call.key, cancelled=True) for call in pending)
        return outcomes

    def _receive(self, worker: _Worker, call: Call) -> Outcome | None:
        """How the worker's call ended, or None for a message of its progress (handed to
        the call's `progress`)."""
        elapsed = time.monotonic() - worker.started
        try:
            if not worker.conn.poll():
                raise EOFError
            message = worker.conn.recv()
            if len(message) == 2 and message[0] == _PROGRESS:
                if call.progress is not None:
                    call.progress(message[1])
                return None
            key, succeeded, payload, seconds = message
        except (EOFError, OSError):
            worker.process.join(timeout=5)
            code = worker.process.exitcode
            worker.kill()
            reason = _exit_reason(code)
            return Outcome(call.key, error=f"worker process died ({reason})", seconds=elapsed)
        worker.call = None
        self._idle.append(worker)
        if succeeded:
            return Outcome(key, value=payload, seconds=seconds)
        return Outcome(key, error=payload, seconds=seconds)


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def default_jobs() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)

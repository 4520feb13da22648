"""Triage on a Dask cluster: each module x execution job is one Dask task.

The client submits every job, streams results back as tasks finish, and on cancel (Ctrl-C)
cancels what is pending, tells running tasks to stop through a Dask `Event`, and waits until
no task of the run is left running. On a worker each job runs in a child process
(`job_process`), so the per-job time limit and a cancel kill it.

Workers read the dump at the client's path (a shared filesystem) unless the files are
shipped: then each task carries its job's files' bytes and the worker replays them from a
temporary folder in its local directory, removed afterwards. A worker that dies mid-job has
the job rerun elsewhere by the scheduler; a job that kills workers more than the scheduler's
`distributed.scheduler.allowed-failures` times ends as `error` (Dask's KilledWorker).

A Dask cluster exchanges pickles with its clients (tasks, results): whoever runs the scheduler
or a worker can run code in this process, so only a trusted cluster may be used. A scheduler
is asked who it is before the client connects, within `connect_timeout` (a bad address, a
closed port, a peer that accepts and never answers each end with `SchedulerUnreachable`).
A local cluster serves no dashboard and no HTTP pages, and its scheduler and workers start no
HTTP server (`dask_no_http.py`): it listens on 127.0.0.1 only, on the ports Dask talks on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.replay.triage.job import TriageJob, TriageOptions, TriageResult, run_job
from workbench.replay.triage.results_cache import job_files

if TYPE_CHECKING:
    from distributed import Client

INSTALL_HINT = "pip install 'dump-triage-workbench[dask]'"
CANCEL_CHECK_SECONDS = 1.0  # how often a running task asks whether its run was cancelled
STOP_WAIT_SECONDS = 30.0  # how long a cancel waits for running tasks to see it
SHIP_BYTES_IN_FLIGHT = 256 * 2**20  # shipped file bytes submitted and not yet done
CHUNK = 8  # the most jobs one task runs


class DaskUnavailable(Exception):
    """Dask is not installed; the message says what to install."""


class SchedulerUnreachable(Exception):
    """The scheduler's address is not valid, or nothing there answered as a Dask scheduler
    within the connect timeout; the message says which."""


CONNECT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class DaskSettings:
    """Where to run: a scheduler's address, or a local cluster of `local_workers` processes."""

    scheduler: str | None = None
    local_workers: int = 0
    ship_files: bool = False
    allowed_failures: int = 2  # for a local cluster; a running scheduler has its own setting
    connect_timeout: float = CONNECT_TIMEOUT_SECONDS  # to reach `scheduler`


def require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise DaskUnavailable(f"the Dask backend needs Dask: {INSTALL_HINT}") from None


# ------------------------------------------------------------------------------ on a worker

_idle: list[Any] = []  # JobProcess children no task is using
_idle_lock = threading.Lock()
_running = 0  # tasks of any run executing on this worker right now


def running_jobs() -> int:
    """How many triage tasks this worker process is executing (asked through `client.run`)."""
    return _running


def _cancel_checker(event_name: str) -> Callable[[], bool]:
    """Asks the run's Event at most once a second; a fast job never asks at all."""
    from distributed import Event

    next_check = time.monotonic() + CANCEL_CHECK_SECONDS
    event: Event | None = None

    def should_stop() -> bool:
        nonlocal next_check, event
        now = time.monotonic()
        if now < next_check:
            return False
        next_check = now + CANCEL_CHECK_SECONDS
        if event is None:
            event = Event(event_name)
        try:
            return bool(event.is_set())
        except Exception:  # the client and its Event are gone: nobody wants the result
            return True

    return should_stop


def client_settings() -> dict[str, str]:
    """The client's `WORKBENCH_*` environment settings (limits a user set for a run), which
    each job runs under on the workers: their own environment is not the user's."""
    return {name: value for name, value in os.environ.items() if name.startswith("WORKBENCH_")}


def run_task(root: str, jobs: list[TriageJob], options: TriageOptions,
             time_limit: float | None, files: list[dict[str, bytes]] | None, event_name: str,
             environment: dict[str, str]) -> list[tuple[str, Any]]:
    """A few jobs (of one module) on a Dask worker, one after the other, each with its own
    time limit; for each: ("result", TriageResult), ("timed out", seconds), ("error",
    traceback text) or ("stopped", None)."""
    global _running
    with _idle_lock:
        child = _idle.pop() if _idle else None
        _running += 1
    outcomes: list[tuple[str, Any]] = []
    try:
        for number, job in enumerate(jobs):
            outcome, child = _run_one(root, job, options, time_limit,
                                      None if files is None else files[number], event_name,
                                      environment, child)
            outcomes.append(outcome)
            if outcome[0] == "stopped":
                outcomes += [("stopped", None)] * (len(jobs) - len(outcomes))
                break
        return outcomes
    finally:
        with _idle_lock:
            _running -= 1
            if child is not None:
                _idle.append(child)


def _run_one(root: str, job: TriageJob, options: TriageOptions, time_limit: float | None,
             files: dict[str, bytes] | None, event_name: str, environment: dict[str, str],
             child: Any) -> tuple[tuple[str, Any], Any]:
    """One job in `child` (or a new child); the outcome, and the child if it lives on."""
    from workbench.replay.processes.job_process import Died, JobProcess, Stopped, TimeLimit

    folder = None
    start = time.monotonic()
    try:
        if files is not None:
            from distributed import get_worker

            folder = tempfile.mkdtemp(prefix="workbench-job-",
                                      dir=get_worker().local_directory)
            for name, data in files.items():
                path = Path(folder, name).resolve()
                if not path.is_relative_to(Path(folder).resolve()):
                    return ("error", f"{name}: a shipped file's path leaves the job's "
                            "folder"), child
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            root = folder
        try:
            child = child or JobProcess()
            value = child.call(run_job, (Path(root), job, options), time_limit,
                               _cancel_checker(event_name), environment)
        except TimeLimit:
            return ("timed out", time.monotonic() - start), None
        except Stopped:
            return ("stopped", None), None
        except Died as error:
            return ("error", f"the job's process died ({error})"), None
        except RuntimeError as error:
            return ("error", str(error)), child
        return ("result", value), child
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def chunks(work: list[TriageJob], workers: int) -> list[list[TriageJob]]:
    """The jobs in tasks of up to CHUNK jobs of one module each (fewer when there are not
    enough jobs to keep every worker busy four times over): a task's overhead is paid once
    for all of its jobs, and the module travels once."""
    size = max(1, min(CHUNK, len(work) // max(1, 4 * workers)))
    tasks: list[list[TriageJob]] = []
    for job in work:
        last = tasks[-1] if tasks else None
        if last is not None and len(last) < size and last[0].module is job.module:
            last.append(job)
        else:
            tasks.append([job])
    return tasks


# ------------------------------------------------------------------------------ the client


def read_files(root: Path, job: TriageJob) -> dict[str, bytes]:
    """The bytes a job's replay reads, by path relative to the dump (what `--ship-files`
    sends); a file that cannot be read is left out, and the job reports it as it would."""
    files = {}
    for name in job_files(job):
        with contextlib.suppress(OSError):
            files[name] = Path(root, name).read_bytes()
    return files


def _host(address: str) -> tuple[str, str]:
    """The scheme and host of a scheduler address, checked without looking anything up;
    ValueError says what is wrong."""
    from distributed.comm import parse_address, parse_host_port

    scheme, location = parse_address(address)
    if scheme not in ("tcp", "tls", "ws", "wss"):
        raise ValueError(f"the scheme {scheme}:// is not one a remote scheduler listens on "
                         "(tcp://, tls://, ws://, wss://)")
    host, port = parse_host_port(location)
    if not host or not 0 < int(port) < 65536:
        raise ValueError("give HOST:PORT with a port from 1 to 65535")
    return scheme, host


def is_local_address(address: str) -> bool:
    """Whether `address` names this machine's loopback (localhost, 127.x, ::1)."""
    try:
        host = _host(address)[1]
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def _identity(address: str, timeout: float) -> object:
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity"})
        return await comm.read()
    finally:
        comm.abort()


def check_scheduler(address: str, timeout: float) -> None:
    """Raise `SchedulerUnreachable` unless a Dask scheduler answers at `address` within
    `timeout` seconds (Dask's own connect does not bound a peer that accepts and says
    nothing)."""
    try:
        _host(address)
    except (ValueError, TypeError) as error:
        raise SchedulerUnreachable(f"--scheduler {address}: not a scheduler address: "
                                   f"{error}") from None
    try:
        reply = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
    except (TimeoutError, asyncio.TimeoutError):
        raise SchedulerUnreachable(f"no Dask scheduler answered at {address} within "
                                   f"{timeout:g} s (--connect-timeout)") from None
    except Exception as error:  # OSError, Dask's CommClosedError: nothing to talk to there
        reason = str(error) or type(error).__name__
        raise SchedulerUnreachable(f"cannot reach a Dask scheduler at {address}: {reason}"
                                   ) from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise SchedulerUnreachable(f"{address} is not a Dask scheduler (it says {kind})")


_LOG = logging.getLogger(__name__)

# A local cluster's scheduler and workers serve no pages: no dashboard, no JSON, no metrics.
_NO_HTTP: dict[str, list[str]] = {"distributed.scheduler.http.routes": [],
                                   "distributed.worker.http.routes": []}


@contextlib.contextmanager
def cluster_client(settings: DaskSettings) -> Iterator[Client]:
    """A client of the scheduler at `settings.scheduler` (checked first), or of a local
    cluster of `settings.local_workers` single-threaded processes, closed on exit."""
    import dask
    from distributed import Client, SpecCluster

    if settings.scheduler is not None:
        check_scheduler(settings.scheduler, settings.connect_timeout)
        with Client(settings.scheduler, set_as_default=False,
                    timeout=settings.connect_timeout) as client:
            yield client
        return
    from distributed.worker_memory import parse_memory_limit

    from workbench.replay.triage.dask_no_http import NoHttpNanny, NoHttpScheduler

    # As LocalCluster(processes=True, threads_per_worker=1) makes them, with the classes
    # that listen on no HTTP port (LocalCluster cannot be given a scheduler class).
    count = settings.local_workers
    worker = {"cls": NoHttpNanny, "options": {
        "nthreads": 1, "host": "127.0.0.1", "dashboard": False, "silence_logs": logging.WARN,
        "memory_limit": parse_memory_limit("auto", 1, count, logger=_LOG)}}
    with dask.config.set({"distributed.scheduler.allowed-failures": settings.allowed_failures,
                          **_NO_HTTP}), \
            SpecCluster(scheduler={"cls": NoHttpScheduler,
                                   "options": {"host": "127.0.0.1", "dashboard": False}},
                        workers=dict.fromkeys(range(count), worker), worker=worker,
                        silence_logs=logging.WARN) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def run_on_dask(root: Path, work: list[TriageJob], options: TriageOptions,
                settings: DaskSettings, time_limit: float | None,
                finish: Callable[[TriageResult], None],
                failed: Callable[[TriageJob, str, float], None],
                cancel: threading.Event | None = None) -> None:
    """Run `work` as Dask tasks; each job ends in `finish` (its result) or `failed`."""
    require_dask()
    from distributed import Event, as_completed
    from distributed.client import FutureCancelledError

    root = Path(root).resolve()
    token = uuid.uuid4().hex[:12]
    event_name = f"workbench-triage-{token}"
    with cluster_client(settings) as client:
        cancelled = Event(event_name, client=client)
        environment = client_settings()
        by_future: dict[Any, tuple[list[TriageJob], int]] = {}  # future -> (jobs, bytes)
        workers = sum(client.nthreads().values()) or max(1, settings.local_workers)
        waiting = deque(enumerate(chunks(work, workers)))
        in_flight = 0
        pending = as_completed([], loop=client.loop)

        def submit_more() -> None:
            """Submit every task, or with shipped files as many as keep the bytes held by the
            client and the cluster under SHIP_BYTES_IN_FLIGHT (one task at least)."""
            nonlocal in_flight
            while waiting and (not settings.ship_files or not by_future
                               or in_flight < SHIP_BYTES_IN_FLIGHT):
                index, jobs = waiting.popleft()
                files = [read_files(root, job) for job in jobs] if settings.ship_files else None
                size = sum(len(data) for shipped in files or [] for data in shipped.values())
                future = client.submit(run_task, os.fspath(root), jobs, options, time_limit,
                                       files, event_name, environment,
                                       key=f"workbench-triage-{token}-{index}", pure=False)
                by_future[future] = (jobs, size)
                in_flight += size
                pending.add(future)

        try:
            submit_more()
            while not pending.is_empty():
                if cancel is not None and cancel.is_set():
                    raise KeyboardInterrupt
                batch = pending.next_batch(block=False)
                if not batch:
                    time.sleep(0.05)
                    continue
                for future in batch:
                    jobs, size = by_future.pop(future)
                    in_flight -= size
                    _report(future, jobs, time_limit, finish, failed, FutureCancelledError)
                submit_more()
        except BaseException:
            _stop(client, cancelled, list(by_future))
            raise
        finally:
            by_future.clear()


def _report(future: Any, jobs: list[TriageJob], time_limit: float | None,
            finish: Callable[[TriageResult], None],
            failed: Callable[[TriageJob, str, float], None],
            cancelled_error: type[Exception]) -> None:
    try:
        outcomes = future.result()
    except cancelled_error:
        return
    except Exception as error:  # KilledWorker and the like: the scheduler gave up on it
        for job in jobs:
            failed(job, f"{type(error).__name__}: {error}", 0.0)
        return
    for job, (kind, value) in zip(jobs, outcomes, strict=True):
        if kind == "result":
            finish(value)
        elif kind == "timed out":
            failed(job, f"time limit of {time_limit:g} s per job exceeded", value)
        elif kind == "error":
            failed(job, str(value).strip().splitlines()[-1], 0.0)


def _stop(client: Any, cancelled: Any, futures: list) -> None:
    """Cancel what is left and wait until no task of this run runs on any worker."""
    with contextlib.suppress(Exception):
        cancelled.set()
    with contextlib.suppress(Exception):
        client.cancel(futures, force=True)
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            counts = client.run(running_jobs)
        except Exception:
            return
        if not any(counts.values()):
            return
        time.sleep(0.1)

"""Triage on a real Dask cluster: a `dask scheduler` and `dask worker` processes on 127.0.0.1
(random free ports, torn down after), driven through the CLI and the triage API.

The workers run with `--no-nanny`, so each worker is the process the test started and killing
it by its process id kills the worker itself (a nanny would restart it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil  # comes with distributed
import pytest

from tests.helpers.dask_probes import busy_job_processes
from tests.helpers.patience import JOB_TIME_LIMIT, PATIENCE, wait_for
from tests.helpers.replay_fakes import FAKE, make_module
from workbench.index import scan
from workbench.model import Dump
from workbench.output.json_shapes import triage_result_json
from workbench.replay.triage.dask_engine import DaskSettings, chunks, running_jobs
from workbench.replay.triage.run import TriageOptions, triage, triage_jobs

TESTS = Path(__file__).parents[1]
ROOT = TESTS.parent  # on the workers' PYTHONPATH: `tests.helpers` imports there
DUMP = TESTS / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
STOP_GRACE = 30.0  # seconds a Dask process has to end on SIGTERM before it is killed


def _dask_command(*words: str) -> list[str]:
    """`dask scheduler ...` / `dask worker ...` through this interpreter's `dask` script."""
    return [str(Path(sys.executable).with_name("dask")), *words]


def _address(scheduler_file: Path) -> str:
    """The address in the scheduler's file, or "" while it is missing or still being written."""
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return ""


class Cluster:
    """A scheduler and workers as subprocesses; `close` stops them all and checks they ended."""

    def __init__(self, folder: Path, allowed_failures: int = 3) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                        [str(ROOT), os.environ.get("PYTHONPATH", "")]),
                    "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": str(allowed_failures)}
        scheduler_file = folder / "scheduler.json"
        self.scheduler = self._start(_dask_command(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", str(scheduler_file)), folder)
        wait_for(lambda: _address(scheduler_file) or self.scheduler.poll() is not None,
                 "the scheduler's address")
        assert self.scheduler.poll() is None, "the scheduler exited"
        self.address = _address(scheduler_file)
        import distributed  # the test extra installs it (imported here: it takes a second)

        # The client retries until the scheduler listens, up to its timeout.
        self.client = distributed.Client(self.address, set_as_default=False,
                                         timeout=PATIENCE)

    def _start(self, command: list[str], cwd: Path) -> subprocess.Popen:
        log = open(self.folder / f"process-{len(self.processes)}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(command, cwd=cwd, env=self.env, stdout=log,
                                   stderr=subprocess.STDOUT)
        log.close()
        self.processes.append(process)
        return process

    def start_workers(self, count: int, cwd: Path | None = None) -> None:
        """Start `count` more workers (one thread each) and wait until they have joined."""
        expected = len(self.live_workers()) + count
        cwd = cwd or self.folder
        for _ in range(count):
            self.workers.append(self._start(_dask_command(
                "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                "--host", "127.0.0.1", "--local-directory", str(cwd)), cwd))
        self.client.wait_for_workers(expected, timeout=PATIENCE)

    def live_workers(self) -> list[subprocess.Popen]:
        return [w for w in self.workers if w.poll() is None]

    def running_jobs(self) -> int:
        return sum(self.client.run(running_jobs).values())

    def close(self) -> None:
        """Stop every process, then check that none is left: not the scheduler and workers,
        nor the job processes the workers started (they exit when their worker is gone)."""
        self.client.close()
        children = []
        for process in self.processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                children += psutil.Process(process.pid).children(recursive=True)
        # The workers first, then the scheduler: a worker told to stop while its scheduler
        # closes can hang on its way out (seen on a busy machine). One that does not end within
        # STOP_GRACE is killed: what is checked is that none is left, not how it ended.
        for group in (self.workers, [self.scheduler]):
            for process in group:
                if process.poll() is None:
                    process.terminate()
            for process in group:
                try:
                    process.wait(timeout=STOP_GRACE)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        assert all(p.returncode is not None for p in self.processes)
        _, alive = psutil.wait_procs(children, timeout=PATIENCE)
        assert alive == [], f"left running: {alive}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        cluster.start_workers(2)
        yield cluster
    finally:
        cluster.close()


def _workbench(*words: str, env: dict | None = None,
               cache: Path | None = None) -> subprocess.CompletedProcess:
    extra = ["--no-cache"] if cache is None else ["--cache", str(cache)]
    return subprocess.run([sys.executable, "-m", "workbench", "triage", *words, *extra],
                          capture_output=True, text=True, timeout=PATIENCE, env=env)


def _lines(stdout: str) -> dict:
    payload = json.loads(stdout)
    for line in payload["results"]:
        line.pop("seconds")
    return payload


@pytest.fixture(scope="module")
def local_pool_json() -> tuple[int, dict]:
    done = _workbench(str(DUMP), "--jobs", "2", "--json")
    return done.returncode, _lines(done.stdout)


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*"))


def test_same_json_and_exit_status_as_the_local_pool(cluster: Cluster, local_pool_json) -> None:
    status, expected = local_pool_json
    assert status == 1 and expected["summary"]["mismatch"] == 1  # the planted fusion bug
    before = _listing(DUMP)
    done = _workbench(str(DUMP), "--scheduler", cluster.address, "--json")
    assert done.returncode == status, done.stderr
    assert _lines(done.stdout) == expected
    assert _listing(DUMP) == before  # nothing written into the dump folder
    assert cluster.running_jobs() == 0


def test_ship_files_to_workers_that_cannot_see_the_dump(tmp_path: Path, local_pool_json) -> None:
    """The workers start only after the dump folder is deleted: whatever they replay can only
    have come with the tasks."""
    status, expected = local_pool_json
    dump = Path(shutil.copytree(DUMP, tmp_path / "dump"))
    (tmp_path / "cluster").mkdir()
    cluster = Cluster(tmp_path / "cluster")
    try:
        command = subprocess.Popen(
            [sys.executable, "-m", "workbench", "triage", str(dump), "--scheduler",
             cluster.address, "--ship-files", "--json", "--no-cache"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        work = triage_jobs(scan(DUMP))
        work.sort(key=lambda job: -len(job.module.steps))  # as triage orders them
        count = len(chunks(work, 1))  # the client sees no worker yet: tasks sized for one
        wait_for(lambda: command.poll() is not None or cluster.client.run_on_scheduler(
            lambda dask_scheduler: len(dask_scheduler.tasks)) >= count, "the tasks submitted")
        assert command.poll() is None, command.stderr.read() if command.stderr else ""
        shutil.rmtree(dump)
        workers = tmp_path / "workers"
        workers.mkdir()
        cluster.start_workers(2, cwd=workers)
        stdout, stderr = command.communicate(timeout=PATIENCE)
        assert command.returncode == status, stderr
        assert _lines(stdout) == expected
        assert not dump.exists()
        assert list(workers.rglob("workbench-job-*")) == []  # the jobs' folders removed
    finally:
        cluster.close()


def _napping_dump(modules: int) -> Dump:
    return Dump(Path("/nonexistent"), modules=[
        make_module("nap good nap", f"module_{n:04d}") for n in range(modules)])


def test_a_worker_killed_mid_run_loses_nothing(cluster: Cluster) -> None:
    results: list = []
    dump = _napping_dump(8)
    run = threading.Thread(target=lambda: results.extend(triage(
        dump, TriageOptions(backend=FAKE), time_limit=60,
        dask=DaskSettings(scheduler=cluster.address))))
    run.start()
    wait_for(lambda: cluster.running_jobs() > 0, "a job running")
    pids = cluster.client.run(os.getpid)
    busy = {pids[address] for address, count in cluster.client.run(running_jobs).items()
            if count}
    victim = next(w for w in cluster.live_workers() if w.pid in busy)
    os.kill(victim.pid, signal.SIGKILL)
    run.join(timeout=PATIENCE)
    assert not run.is_alive()
    assert victim.wait(timeout=PATIENCE) == -signal.SIGKILL
    assert [(r.module, r.status) for r in results] == [
        (f"module_{n:04d}", "ok") for n in range(8)]
    cluster.start_workers(1)  # back to two for the next test


def _sleeping_dump(folder: Path, modules: int) -> Path:
    """A dump folder whose last step is named `sleep`: with the scripted backend (which reads
    no file) its jobs run for a minute."""
    folder.mkdir()
    for number in range(1, modules + 1):
        stem = f"module_{number:04d}.jit_f"
        for step in ("0000.p.after_pipeline-start.before_good", "0001.p.after_good.before_sleep",
                     "0002.p.after_sleep.before_end"):
            (folder / f"{stem}.{step}.txt").write_text("HloModule f\n")
        (folder / f"{stem}.snapshot.1.pb").write_bytes(b"")
    return folder


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child before it runs: SIGINT's default action. A test run started in the
    background (`pytest &` in a script, CI under `nohup`) ignores SIGINT, its children inherit
    that, and Python then never turns SIGINT into KeyboardInterrupt, as a terminal's Ctrl-C
    would be."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_cancel_every_task(cluster: Cluster, tmp_path: Path,
                                              stop: signal.Signals) -> None:
    dump = _sleeping_dump(tmp_path / "dump", 6)
    run = subprocess.Popen(
        [sys.executable, "-m", "workbench", "triage", str(dump), "--scheduler", cluster.address,
         "--backend", FAKE, "--no-cache"],
        env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        wait_for(lambda: run.poll() is not None or cluster.running_jobs() == 2,
                 "two jobs running")
        assert run.poll() is None, run.communicate()
        run.send_signal(stop)
        # The sleeps last an hour: a run that ended stopped them.
        _, stderr = run.communicate(timeout=PATIENCE)
    finally:  # a run left behind would hold the module's workers for the tests after this one
        if run.poll() is None:
            run.kill()
            run.communicate()
    if stop == signal.SIGINT:
        assert run.returncode == 130, stderr
        assert "interrupted; no job is left running" in stderr
    else:  # ended as a shell reports a signal: 128 + its number
        assert run.returncode == 128 + signal.SIGTERM, stderr
    wait_for(lambda: cluster.running_jobs() == 0, "every job stopped")
    left = cluster.client.run_on_scheduler(
        lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks])
    assert not [k for k in left if "workbench-triage" in k]
    assert not any(cluster.client.run(busy_job_processes).values())


def test_default_path_does_not_import_dask() -> None:
    code = ("import sys\n"
            "from workbench.cli import main\n"
            f"status = main(['triage', {str(DUMP)!r}, '--jobs', '0', '--json', '--no-cache'])\n"
            "assert status == 1, status\n"
            "loaded = [m for m in ('dask', 'distributed') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=PATIENCE)
    assert done.returncode == 0, done.stderr


def test_scheduler_without_dask_says_what_to_install() -> None:
    code = ("import sys\n"
            "sys.modules['distributed'] = None\n"
            "from workbench.cli import main\n"
            f"sys.exit(main(['triage', {str(DUMP)!r}, '--scheduler', 'tcp://127.0.0.1:1']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=PATIENCE)
    assert done.returncode == 2
    assert "pip install 'dump-triage-workbench[dask]'" in done.stderr


def test_time_limit_and_a_crashing_job_on_the_workers(cluster: Cluster) -> None:
    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good sleep", "module_0001"),
        make_module("good crash", "module_0002"),
        make_module("good bad", "module_0003"),
    ])
    # The limit leaves the quick jobs room on a busy machine; the sleeper's hour is far beyond.
    results = {r.module: r for r in triage(dump, TriageOptions(backend=FAKE),
                                           time_limit=JOB_TIME_LIMIT,
                                           dask=DaskSettings(scheduler=cluster.address))}
    assert results["module_0001"].status == "error"
    assert results["module_0001"].detail == f"time limit of {JOB_TIME_LIMIT:g} s per job exceeded"
    assert results["module_0002"].status == "error"
    assert results["module_0002"].detail == "the job's process died (exit status 3)"
    assert results["module_0003"].status == "mismatch"
    wait_for(lambda: cluster.running_jobs() == 0, "every job ended")


def test_a_job_whose_workers_keep_dying_ends_as_an_error(tmp_path: Path) -> None:
    """With `allowed-failures` 0 the scheduler gives up on a job at its first dead worker:
    the jobs the killed worker held are errors naming KilledWorker, the others finish, nothing
    is retried forever."""
    cluster = Cluster(tmp_path, allowed_failures=0)
    try:
        cluster.start_workers(2)
        results: list = []
        run = threading.Thread(target=lambda: results.extend(triage(
            _napping_dump(4), TriageOptions(backend=FAKE), time_limit=60,
            dask=DaskSettings(scheduler=cluster.address))))
        run.start()
        wait_for(lambda: cluster.running_jobs() > 0, "a job running")
        pids = cluster.client.run(os.getpid)
        busy = {pids[a] for a, n in cluster.client.run(running_jobs).items() if n}
        os.kill(next(w.pid for w in cluster.live_workers() if w.pid in busy), signal.SIGKILL)
        run.join(timeout=PATIENCE)
        assert not run.is_alive()
        assert len(results) == 4
        failed = [r for r in results if r.status == "error"]
        assert 1 <= len(failed) <= 2  # a one-thread worker holds at most two tasks
        assert all(r.detail.startswith("KilledWorker") for r in failed)
        assert {r.status for r in results if r not in failed} == {"ok"}
    finally:
        cluster.close()


def test_shipped_files_are_submitted_in_a_bounded_window(cluster: Cluster, local_pool_json,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for one job's files at a time, jobs are submitted one by one as others
    finish, and the result is the same."""
    import distributed

    from workbench.replay.triage import dask_engine

    monkeypatch.setattr(dask_engine, "SHIP_BYTES_IN_FLIGHT", 1)
    submitted: list[int] = []
    real_submit = distributed.Client.submit

    def submit(self, *args, **kwargs):
        submitted.append(len([f for f in self.futures if "workbench-triage" in str(f)]))
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "submit", submit)
    results = triage(scan(DUMP), dask=DaskSettings(scheduler=cluster.address, ship_files=True))
    lines = [triage_result_json(r) for r in results]
    for line in lines:
        line.pop("seconds")
    assert lines == local_pool_json[1]["results"]
    assert len(submitted) == 9 and max(submitted) <= 1  # never more than one in flight


@pytest.mark.parametrize("words", [["--jobs", "2", "--dask-workers", "2"], ["--ship-files"]])
def test_flags_that_do_not_go_together(words: list[str]) -> None:
    done = _workbench(str(DUMP), *words)
    assert done.returncode == 2
    assert "--jobs is for" in done.stderr or "--ship-files needs" in done.stderr


def test_chunks_hold_jobs_of_one_module_and_leave_every_worker_work() -> None:
    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good good", f"module_{n:04d}", tuple(f"snapshot.{e}" for e in range(1, 21)))
        for n in range(3)])
    work = triage_jobs(dump)
    tasks = chunks(work, 2)
    assert [job for task in tasks for job in task] == work  # every job once, in order
    assert all(len({job.module.key for job in task}) == 1 for task in tasks)
    assert max(len(task) for task in tasks) == 60 // 8  # enough tasks for 2 workers x 4
    assert {len(task) for task in chunks(work, 100)} == {1}


def test_a_timed_out_job_in_a_task_leaves_its_other_jobs_their_own_limit(
        cluster: Cluster) -> None:
    sleepy = make_module("good sleep", "module_0000", ("snapshot.1", "snapshot.2"))
    quick = [make_module("good good", f"module_{n:04d}", tuple(f"snapshot.{e}" for e in
                                                               range(1, 5)))
             for n in range(1, 5)]
    dump = Dump(Path("/nonexistent"), modules=[sleepy, *quick])
    assert len(chunks(triage_jobs(dump), 2)[0]) == 2  # both sleepers in one task
    results = triage(dump, TriageOptions(backend=FAKE), time_limit=1.0,
                     dask=DaskSettings(scheduler=cluster.address))
    assert len(results) == 18
    assert [(r.execution, r.detail) for r in results if r.module == "module_0000"] == [
        ("snapshot.1", "time limit of 1 s per job exceeded"),
        ("snapshot.2", "time limit of 1 s per job exceeded")]
    assert {r.status for r in results if r.module != "module_0000"} == {"ok"}

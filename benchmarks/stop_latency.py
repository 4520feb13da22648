"""How fast a running job is stopped: the figures the tests once asserted, now measured here.

    python benchmarks/stop_latency.py [--repeat 5] [--no-dask]

Tests wait for a stop to happen and assert that it did (a stopped job would otherwise run for
an hour); how long a stop takes is measured here, each against its goal, with the start-up of
a Python process (`python -c pass`, timed in the same run) as the yardstick of how busy the
machine is:

  1. a job process's time limit: from the limit to `TimeLimit` raised;
  2. a replay step in a worker process, cancelled from another thread;
  3. `triage --jobs 2` cancelled while both workers run jobs that never end by themselves;
  4. an external tool (a wrapper and its grandchild) cancelled: from `cancel()` to its end;
  5. the live watch: from a file written into a watched folder to the model that holds it;
  6. with Dask installed (and not `--no-dask`): Ctrl-C to a `triage --scheduler` command's end,
     on a local scheduler and two workers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))  # the scripted backend whose jobs sleep for an hour

from patience import FOREVER, wait_for  # noqa: E402
from replay_fakes import FAKE, make_module  # noqa: E402

from workbench.model import Dump  # noqa: E402
from workbench.replay.job_process import JobProcess, TimeLimit  # noqa: E402

GOALS = {  # seconds
    "job process time limit": 0.5,
    "worker step cancelled": 1.0,
    "triage --jobs 2 cancelled": 2.0,
    "external tool cancelled": 1.0,
    "live watch: file to model": 1.5,
    "dask triage: Ctrl-C to exit": 5.0,
}


def python_start() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def job_time_limit() -> float:
    process = JobProcess()
    limit = 0.5
    start = time.perf_counter()
    try:
        process.call(time.sleep, (FOREVER,), limit)
    except TimeLimit:
        return time.perf_counter() - start - limit
    raise AssertionError("the time limit did not stop the call")


def triage_cancelled() -> float:
    from workbench.replay.triage import TriageOptions, triage

    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good sleep", f"module_000{i}") for i in range(4)])
    cancel = threading.Event()
    set_at: list[float] = []

    def stop() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(1.0, stop)
    timer.start()
    triage(dump, TriageOptions(backend=FAKE), jobs=2, cancel=cancel)
    return time.perf_counter() - set_at[0]


WRAPPER = """import subprocess, sys
child = subprocess.Popen(["sleep", "3600"])
print(child.pid, flush=True)
sys.exit(child.wait())
"""


def tool_cancelled() -> float:
    from workbench.external_tools import ToolProcess

    process = ToolProcess([sys.executable, "-c", WRAPPER], timeout_s=FOREVER)
    next(iter(process.lines()))
    start = time.perf_counter()
    process.cancel()
    result = process.wait(timeout=60)
    assert result.outcome == "cancelled"
    return time.perf_counter() - start


def watch_latency() -> float:
    from workbench.watch import DumpChange, LiveIndex, watch_index

    source = TESTS / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
    step = next(source.glob("module_0010.*.before_optimizations.txt"))
    with tempfile.TemporaryDirectory() as folder:
        live = LiveIndex(folder)
        live.scan()
        arrived: list[float] = []

        def on_change(change: DumpChange) -> None:
            arrived.append(time.perf_counter())

        watcher = watch_index(live, on_change)
        try:
            start = time.perf_counter()
            Path(folder, step.name).write_bytes(step.read_bytes())
            wait_for(lambda: arrived, "the change")
            return arrived[0] - start
        finally:
            watcher.stop()


def dask_ctrl_c() -> float | None:
    try:
        import distributed
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as folder:
        dump = Path(folder, "dump")
        dump.mkdir()
        for number in range(1, 5):
            stem = f"module_{number:04d}.jit_f"
            for step in ("0000.p.after_pipeline-start.before_good",
                         "0001.p.after_good.before_sleep", "0002.p.after_sleep.before_end"):
                Path(dump, f"{stem}.{step}.txt").write_text("HloModule f\n")
            Path(dump, f"{stem}.snapshot.1.pb").write_bytes(b"")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS),
                                                            os.environ.get("PYTHONPATH", "")])}
        dask = str(Path(sys.executable).with_name("dask"))
        scheduler_file = Path(folder, "scheduler.json")
        processes = [subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(scheduler_file)], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)]
        try:
            wait_for(lambda: _address(scheduler_file), "the scheduler")
            address = _address(scheduler_file)
            for _ in range(2):
                processes.append(subprocess.Popen(
                    [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                     "--host", "127.0.0.1", "--local-directory", folder], env=env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with distributed.Client(address, set_as_default=False, timeout=120) as client:
                client.wait_for_workers(2, timeout=120)
                from workbench.replay.dask_triage import running_jobs

                run = subprocess.Popen(
                    [sys.executable, "-m", "workbench", "triage", str(dump), "--scheduler",
                     address, "--backend", FAKE, "--no-cache"], env=env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_for(lambda: sum(client.run(running_jobs).values()) == 2, "two jobs")
                start = time.perf_counter()
                run.send_signal(signal.SIGINT)
                run.wait(timeout=600)
                return time.perf_counter() - start
        finally:
            for process in reversed(processes):  # the workers, then the scheduler
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _address(scheduler_file: Path) -> str:
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    measures: dict[str, Callable[[], float | None]] = {
        "job process time limit": job_time_limit,
        "worker step cancelled": _worker_step_cancelled,
        "triage --jobs 2 cancelled": triage_cancelled,
        "external tool cancelled": tool_cancelled,
        "live watch: file to model": watch_latency,
    }
    if not args.no_dask:
        measures["dask triage: Ctrl-C to exit"] = dask_ctrl_c
    yardstick = statistics.median(python_start() for _ in range(args.repeat))
    print(f"python start-up (median of {args.repeat}): {yardstick:.3f} s")
    print(f"{'what':32} {'median s':>9} {'max s':>8} {'goal s':>7} {'x start-up':>11}  met")
    for name, measure in measures.items():
        samples = [measure() for _ in range(args.repeat)]
        if any(sample is None for sample in samples):
            print(f"{name:32} {'(dask is not installed)':>40}")
            continue
        values = [s for s in samples if s is not None]
        median = statistics.median(values)
        print(f"{name:32} {median:9.3f} {max(values):8.3f} {GOALS[name]:7.1f} "
              f"{median / yardstick:11.1f}  {'yes' if median <= GOALS[name] else 'NO'}")


def _worker_step_cancelled() -> float:
    """From the cancel to `Cancelled` raised, the step being one that never ends."""
    from replay_fakes import FakeBackend

    from workbench.replay.inputs import InputSpec, resolve_inputs
    from workbench.replay.steps import ProcessRunner, Replay
    from workbench.replay.workers import Cancelled

    backend = FakeBackend(Path("/nonexistent"), make_module("good sleep good"))
    inputs = resolve_inputs(backend, backend.module.executions[0], InputSpec())
    cancel = threading.Event()
    set_at: list[float] = []

    def stop() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    with Replay(backend, inputs, runner=ProcessRunner(), cancel=cancel) as replay:
        replay.evaluate(0)  # the worker is started and warm
        timer = threading.Timer(0.3, stop)
        timer.start()
        try:
            replay.evaluate(1)
        except Cancelled:
            return time.perf_counter() - set_at[0]
    raise AssertionError("the cancel did not stop the step")


if __name__ == "__main__":
    main()

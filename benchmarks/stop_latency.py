"""How fast a running job is stopped: the figures the tests once asserted, now measured here.

    python benchmarks/stop_latency.py [--repeat 5] [--no-dask] [--no-app]

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
     on a local scheduler and two workers; and that cluster's start-up, from starting the
     scheduler to two workers joined;
  7. the app (headless) during a triage of the corpus's 583-execution JAX test dump: a key
     posted as a terminal sends it to the frame that shows the cursor moved, and Esc to the
     triage stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(HERE.parent))  # the scripted backend whose jobs sleep for an hour

from tests.helpers.patience import FOREVER, wait_for  # noqa: E402
from tests.helpers.replay_fakes import FAKE, make_module  # noqa: E402
from workbench.model import Dump  # noqa: E402
from workbench.replay.processes.job_process import JobProcess, TimeLimit  # noqa: E402

GOALS = {  # seconds
    "job process time limit": 0.5,
    "worker step cancelled": 1.0,
    "triage --jobs 2 cancelled": 2.0,
    "external tool cancelled": 1.0,
    "live watch: file to model": 1.5,
    "dask triage: Ctrl-C to exit": 5.0,
    "dask cluster: up, 2 workers": 10.0,  # the tests once allowed 60 s
    "app: key during triage": 0.2,  # the tests once allowed 10 s
    "app: Esc to triage stopped": 2.0,  # the tests once allowed 10 s
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
    from workbench.replay.triage.run import TriageOptions, triage

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


def _ctrl_c_as_in_a_terminal() -> None:
    """SIGINT's default action in the child: run from the background (`&` in a script), this
    process ignores SIGINT and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def _dask_cluster(folder: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """A local scheduler and two one-thread workers: their address, the environment the
    scripted backend needs, and how long they took to be up."""
    import distributed

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    dask = str(Path(sys.executable).with_name("dask"))
    scheduler_file = Path(folder, "scheduler.json")
    start = time.perf_counter()
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
        yield address, env, time.perf_counter() - start
    finally:
        for process in reversed(processes):  # the workers, then the scheduler
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def dask_startup() -> float | None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as folder, _dask_cluster(folder) as (_, _, seconds):
        return seconds


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
        with _dask_cluster(folder) as (address, env, _), \
                distributed.Client(address, set_as_default=False, timeout=120) as client:
            from workbench.replay.triage.dask_engine import running_jobs

            run = subprocess.Popen(
                [sys.executable, "-m", "workbench", "triage", str(dump), "--scheduler",
                 address, "--backend", FAKE, "--no-cache"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_ctrl_c_as_in_a_terminal)
            try:
                wait_for(lambda: sum(client.run(running_jobs).values()) == 2, "two jobs")
                start = time.perf_counter()
                run.send_signal(signal.SIGINT)
                run.wait(timeout=600)
                return time.perf_counter() - start
            finally:
                if run.poll() is None:
                    run.kill()
                    run.wait()


def app_during_triage() -> dict[str, float]:
    """The app on a dump whose triage takes minutes: three `j` keys while it runs, then Esc."""
    from textual import events
    from tui_harness import key_latency, start_clock

    from workbench.tui.app import WorkbenchApp
    from workbench.tui.panes.modules import ModulesPane

    app = WorkbenchApp(TESTS / "data" / "corpus" / "xla-jax-tests" / "numpy-reducers",
                       watch=False)
    figures: dict[str, float] = {}

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(3):
                await pilot.pause(0.2)
                await app.workers.wait_for_complete()
            table = app.pane(ModulesPane).table
            start_clock()
            await pilot.press("T")
            while app.jobs.current is None or app.jobs.current.done == 0:
                await asyncio.sleep(0.01)
            keys = []
            for _ in range(3):
                cursor = table.cursor
                keys.append(await key_latency(app, "j", lambda c=cursor: table.cursor != c))
            assert app.jobs.current.done < app.jobs.current.total, "the triage ended first"
            figures["app: key during triage"] = statistics.median(keys)
            start = time.perf_counter()
            app.post_message(events.Key("escape", None))
            while app.jobs.busy:
                await asyncio.sleep(0.005)
            figures["app: Esc to triage stopped"] = time.perf_counter() - start

    asyncio.run(scenario())
    return figures


def _address(scheduler_file: Path) -> str:
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-app", action="store_true")
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
        measures["dask cluster: up, 2 workers"] = dask_startup
    yardstick = statistics.median(python_start() for _ in range(args.repeat))
    print(f"python start-up (median of {args.repeat}): {yardstick:.3f} s")
    print(f"{'what':32} {'median s':>9} {'max s':>8} {'goal s':>7} {'x start-up':>11}  met")
    samples = {name: [measure() for _ in range(args.repeat)]
               for name, measure in measures.items()}
    if not args.no_app:  # one app run gives two figures
        for run in [app_during_triage() for _ in range(args.repeat)]:
            for name, seconds in run.items():
                samples.setdefault(name, []).append(seconds)
    for name, values in samples.items():
        if any(value is None for value in values):
            print(f"{name:32} {'(dask is not installed)':>40}")
            continue
        median = statistics.median(values)
        print(f"{name:32} {median:9.3f} {max(values):8.3f} {GOALS[name]:7.1f} "
              f"{median / yardstick:11.1f}  {'yes' if median <= GOALS[name] else 'NO'}")


def _worker_step_cancelled() -> float:
    """From the cancel to `Cancelled` raised, the step being one that never ends."""
    from tests.helpers.replay_fakes import FakeBackend
    from workbench.replay.inputs import InputSpec, resolve_inputs
    from workbench.replay.processes.workers import Cancelled
    from workbench.replay.steps import ProcessRunner, Replay

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

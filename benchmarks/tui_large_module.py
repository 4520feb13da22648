"""Key-to-frame latency of the app on a 1,000,000-instruction HLO module: idle, while the
module is opened (its timeline counted, its text shown), and while it is replayed on fake
data (its entry parameters read, then every step evaluated in a worker process).

    python benchmarks/tui_large_module.py [--instructions 1000000] [--keys 40] [--interval 0.1]

The module is made in a temporary folder (`hostile_bench.make_large_module`) next to a small
real one the app starts on. The app runs headless at 120x40; a key is posted as a terminal
would send it every INTERVAL seconds, each moving the focus between the modules and timeline
panes (`1`, `3`); its latency is the time from posting it to the first frame drawn after the
focus moved. Goal (issue 13): the app stays responsive, p95 under 100 ms in every phase.
Keys idle are the baseline of the same run: on a busy machine they are slower too.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hostile_bench import make_large_module
from tui_harness import key_latency, percentiles, start_clock

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.modules import ModulesPane

SMALL = (Path(__file__).resolve().parent.parent / "tests/data/corpus/xla/layernorm"
         / "module_0010.jit_ln.before_optimizations.txt")  # where the app starts


async def focus_key_latency(app: WorkbenchApp, timeout: float = 60) -> float:
    """The focus key of the modules pane, or of the timeline when the modules pane has the
    focus (the app may move the focus itself), timed until the focus moves and a frame after."""
    before = app.focused
    in_modules = before is not None and app.pane(ModulesPane) in before.ancestors_with_self
    return await key_latency(app, "3" if in_modules else "1",
                             lambda: app.focused is not before, timeout)


async def keys_while(app: WorkbenchApp, count: int, interval: float,
                     busy: Callable[[], bool] | None = None) -> list[float]:
    """Up to `count` latencies of focus keys; stops early once `busy()` is False."""
    samples: list[float] = []
    for _ in range(count):
        if busy is not None and not busy():
            break
        samples.append(await focus_key_latency(app))
        await asyncio.sleep(interval)
    return samples


async def run(folder: Path, instructions: int, keys: int, interval: float) -> None:
    start_clock()
    app = WorkbenchApp(folder, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        small = next(m for m in app.dump.modules if m.name == "jit_ln")
        app.pane(ModulesPane).show_module(small.key)
        for _ in range(3):
            await pilot.pause(0.2)
            await app.workers.wait_for_complete()
        idle = await keys_while(app, keys, interval)
        print(f"  idle                    {percentiles(idle)}")

        module = next(m for m in app.dump.modules if m.name == "big")
        started = time.perf_counter()
        app.pane(ModulesPane).show_module(module.key)
        view = app.pane(DiffPane).view

        def opening_busy() -> bool:  # until its listing is shown and every loader is done
            return (len(view.document.rows) < instructions
                    or any(w.is_running for w in app.workers))

        opening = await keys_while(app, keys, interval, busy=opening_busy)
        while opening_busy():
            await asyncio.sleep(0.05)
        print(f"  opening the module      {percentiles(opening)}  "
              f"(opened in {time.perf_counter() - started:.1f} s)")

        started = time.perf_counter()
        assert app.jobs.replay(module, None, bisect=False)
        replaying = await keys_while(app, keys, interval, busy=lambda: app.jobs.busy)
        seconds = time.perf_counter() - started
        job = app.jobs.current
        state = (f"{job.done} of {job.total} steps evaluated after {seconds:.1f} s, cancelled"
                 if job is not None else f"done in {seconds:.1f} s")
        if job is not None:
            app.action_cancel()
            while app.jobs.busy:
                await asyncio.sleep(0.05)
        print(f"  replay on fake data     {percentiles(replaying)}  ({state})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tui-large-module-"))
    try:
        path = make_large_module(work, args.instructions)
        shutil.copy(SMALL, work)
        print(f"{args.instructions:,}-instruction module: {path.stat().st_size / 1e6:.1f} MB")
        asyncio.run(run(work, args.instructions, args.keys, args.interval))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

"""Time to the first frame and to a fully populated modules pane, against `find`.

    python benchmarks/tui_startup.py [--files 100000] [--repeat 3] [--no-tmux] [--dump DIR ...]
                                     [--no-large-dump]

On the large real dump (JAX's transformer training step, about 2,600 files / 77 MB; made with
JAX into the cache folder when missing, see benchmarks/large_dump.py; --no-large-dump skips
it), a generated folder of N empty files named like real dump files
(benchmarks/index_bench.py), and each real dump given with --dump (a JAX test-suite dump of
tens of thousands of files). For each, best of N runs:
  - `find DIR -type f | wc -l`, the baseline;
  - the app in this process (imports done): time to its first frame, and to the moment the
    modules pane lists every module (scan finished);
  - key to frame while the folder is still being indexed: `j` in the modules pane, posted
    every 20 ms from the first listed module until the scan is done (latency percentiles
    over all runs);
  - the installed `workbench` command in a real terminal (tmux), from launch to a screen
    that shows the module count (Python start-up and imports included).
DESIGN.md's target: first frame on the large dump in under 0.5 s after imports.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from index_bench import make_large_folder
from tui_harness import (
    best_of,
    first_frame_after,
    key_latency,
    large_dump,
    percentiles,
    start_clock,
)

from workbench.index import scan
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.modules import ModulesPane, is_helper_module

COMMAND = Path(sys.executable).parent / "workbench"
RUNS = itertools.count()


def find_seconds(folder: Path) -> float:
    start = time.perf_counter()
    subprocess.run(f"find '{folder}' -type f | wc -l", shell=True, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


KEY_INTERVAL = 0.02  # seconds between two keys while indexing


def in_process(folder: Path, visible: int) -> tuple[float, float, list[float]]:
    """(seconds to the first frame, seconds to a full modules pane, key-to-frame latencies
    of `j` in the modules pane while the scan ran), from creating the app."""

    async def run() -> tuple[float, float, list[float]]:
        start_clock()
        started = time.perf_counter()
        app = WorkbenchApp(folder, watch=False)
        latencies: list[float] = []
        async with app.run_test(size=(120, 40)):
            table = app.pane(ModulesPane).table
            while not (app.scanned and len(table.rows) == visible):
                if not app.scanned and len(table.rows) > table.cursor + 1:
                    before = table.cursor
                    latencies.append(await key_latency(
                        app, "j", lambda b=before: table.cursor != b or app.scanned))
                    await asyncio.sleep(KEY_INTERVAL)
                else:
                    await asyncio.sleep(0.002)
            populated = time.perf_counter()
            first = first_frame_after(started)
            assert first is not None
            return first - started, populated - started, latencies

    return asyncio.run(run())


def in_tmux(folder: Path, modules: int) -> float:
    """Seconds from launching the installed command to a screen showing the module count."""
    socket = f"workbench-bench-{os.getpid()}-{next(RUNS)}"  # a fresh tmux server each run
    tmux = ["tmux", "-u", "-L", socket]
    try:
        started = time.perf_counter()
        subprocess.run([*tmux, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40",
                        "-e", "TERM=xterm-256color", "-e", "LC_ALL=C.UTF-8",
                        f"{COMMAND} '{folder}' --no-watch"], check=True)
        while True:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "bench"],
                                    capture_output=True, text=True).stdout
            if f"{modules} modules" in screen:
                return time.perf_counter() - started
            if time.perf_counter() - started > 120:
                raise SystemExit(f"the app never showed {modules} modules:\n{screen}")
            time.sleep(0.005)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def measure(label: str, folder: Path, repeat: int, use_tmux: bool) -> None:
    dump = scan(folder)
    visible = sum(1 for m in dump.modules if not is_helper_module(m))
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    find_s = best_of(repeat, lambda: find_seconds(folder))
    runs = [in_process(folder, visible) for _ in range(repeat)]
    first_s = min(r[0] for r in runs)
    full_s = min(r[1] for r in runs)
    latencies = [latency for r in runs for latency in r[2]]
    print(f"{label}: {files:,} files, {len(dump.modules):,} modules ({visible:,} listed, "
          f"helpers hidden)")
    print(f"  find -type f | wc -l            {find_s * 1000:8.1f} ms   (baseline)")
    print(f"  first frame (in process)        {first_s * 1000:8.1f} ms   "
          f"ratio {first_s / find_s:6.2f}x")
    print(f"  modules pane full (in process)  {full_s * 1000:8.1f} ms   "
          f"ratio {full_s / find_s:6.2f}x")
    print(f"  key to frame while indexing     {percentiles(latencies)}")
    if use_tmux:
        tmux_s = best_of(repeat, lambda: in_tmux(folder, len(dump.modules)))
        print(f"  installed command, tmux: launch to the module count on screen "
              f"{tmux_s * 1000:8.1f} ms   ratio {tmux_s / find_s:6.2f}x (Python start-up "
              f"and imports included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-tmux", action="store_true",
                        help="skip the real-terminal measurement (no tmux here)")
    parser.add_argument("--no-large-dump", action="store_true",
                        help="skip the large JAX dump (made with JAX when missing)")
    parser.add_argument("--dump", type=Path, action="append", default=[],
                        help="a real dump folder to measure too (repeatable)")
    args = parser.parse_args()
    use_tmux = not args.no_tmux and shutil.which("tmux") is not None and COMMAND.exists()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at start: {load}")
    if not args.no_large_dump:
        folder, how = large_dump()
        measure(f"large dump: {how}", folder, args.repeat, use_tmux)
    for dump in args.dump:
        measure(f"real dump {dump}", dump, args.repeat, use_tmux)
    with tempfile.TemporaryDirectory(prefix="workbench-tui-bench-") as tmp:
        generated = Path(tmp) / "dump"
        generated.mkdir()
        make_large_folder(generated, args.files)
        measure(f"generated: {args.files:,} empty files named like real dump files", generated,
                args.repeat, use_tmux)


if __name__ == "__main__":
    main()

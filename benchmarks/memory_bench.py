"""Peak memory (RSS) of the commands and of the terminal app on a 1 GB dump.

    python benchmarks/memory_bench.py [--size-mb 1000] [--walk 2]

DESIGN.md's target: browsing a 1 GB dump keeps peak RSS under 300 MB. The folder is made of
REAL dump files: the JAX transformer dump of `benchmarks/large_dump.py` (or, without JAX, the
dumps of tests/data/corpus/xla) repeated under fresh module ids until it holds SIZE MB. The
copies are hard links when the file system allows (same bytes, no disk space), and the folder
is cached next to the large dump, so later runs start at once.

Each measurement runs in a child process, which reports its own peak RSS (VmHWM in
/proc/self/status) when it ends:
  - the baseline: `python -c "import workbench.tui.app"` (interpreter, Textual, the workbench),
  - `workbench ls DIR --json` and `workbench ls DIR --check`,
  - the app, headless (`App.run_test`, 120x40), browsing: the modules pane filled, every module
    selected in turn (its timeline's step facts computed), then, with the IR diff pane open,
    every step of the timelines of the WALK largest modules (by the size of their IR files)
    and of one module of each name,
  - `workbench show DIR MODULE --changed` on the largest module,
  - `workbench bisect DIR MODULE` on that module's first execution.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_dump import COMPLETE, MissingJax, cache_root, make_dump  # noqa: E402

CORPUS_XLA = REPO / "tests" / "data" / "corpus" / "xla"
MODULE_ID = re.compile(r"module_(\d{4})")
TARGET_MB = 300


# ----- the folder ---------------------------------------------------------------------------

def source_dumps() -> tuple[list[Path], str]:
    """The real dumps the folder is made of, and what they are."""
    try:
        return [make_dump(4)], "the JAX transformer dump of benchmarks/large_dump.py"
    except MissingJax:
        folders = sorted(p for p in CORPUS_XLA.iterdir() if p.is_dir())
        return folders, "the XLA dumps of tests/data/corpus/xla (JAX is not installed)"


def dump_files(folder: Path) -> dict[str, list[Path]]:
    """The files of a dump grouped by module id (files of no module are left out)."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found = MODULE_ID.search(path.relative_to(folder).as_posix())
            if found:
                groups.setdefault(found.group(1), []).append(path)
    return groups


def place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # another file system, or links refused: copy the bytes
        shutil.copy2(source, target)


def make_folder(size_mb: int) -> tuple[Path, str]:
    """A dump of at least `size_mb` MB of real files under fresh module ids, cached."""
    sources, what = source_dumps()
    folder = cache_root() / f"memory-bench-{size_mb}mb"
    if (folder / COMPLETE).exists():
        return folder, what
    if folder.exists():
        shutil.rmtree(folder)  # cut short by an earlier run
    templates = [(dump, files) for dump in sources for files in dump_files(dump).values()]
    total = sum(p.stat().st_size for _, files in templates for p in files)
    copies = -(-size_mb * 1_000_000 // total)
    if copies * len(templates) > 10_000:
        raise SystemExit(f"{size_mb} MB needs more than 10,000 module ids (4 digits)")
    next_id = 0
    for _ in range(copies):
        for dump, files in templates:
            new_id = f"module_{next_id:04d}"
            next_id += 1
            for path in files:
                relative = MODULE_ID.sub(new_id, path.relative_to(dump).as_posix(), count=1)
                place(path, folder / relative)
    (folder / COMPLETE).write_text(f"copies={copies} of {what}\n")
    return folder, what


# ----- measuring a child process ------------------------------------------------------------

def vm_hwm() -> float:
    """This process's peak RSS so far, in MB. (Not `ru_maxrss` of a child as seen by its
    parent: Linux counts into it the parent's RSS at the fork, here tens of MB.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("no VmHWM in /proc/self/status (this benchmark needs Linux)")


def run_measured(report: Path, argv: list[str]) -> int:
    """In the child: run `workbench ARGV` (or, for `-c CODE`, the code), then write the
    process's peak RSS to `report`."""
    try:
        if argv[:1] == ["-c"]:
            exec(argv[1], {"__name__": "__main__"})
            status = 0
        else:
            from workbench.cli import main as workbench_main

            status = workbench_main(argv)
    finally:
        report.write_text(f"{vm_hwm()}\n")
    return status


def peak_rss(argv: list[str], label: str, stdout: Path | None = None) -> tuple[float, float]:
    """Run `workbench ARGV` in a child process (output to `stdout`, else discarded); its peak
    RSS in MB and its wall time in seconds."""
    report = Path(tempfile.mkstemp(prefix="memory-bench-", suffix=".rss")[1])
    start = time.perf_counter()
    with open(stdout or os.devnull, "w") as out:
        done = subprocess.run([sys.executable, __file__, "--measure", str(report), "--", *argv],
                              cwd=REPO, stdout=out, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    try:
        if done.returncode not in (0, 1):  # 1: a command that found problems, as designed
            raise SystemExit(f"{label} failed ({done.returncode}):\n{done.stderr}")
        return float(report.read_text()), seconds
    finally:
        report.unlink()


# ----- the app, browsing (runs in the child process) ------------------------------------------

def ir_bytes(folder: Path, files: list[str | None]) -> int:
    """The size of a module's IR: its steps' files (the "biggest module" is the largest)."""
    return sum((folder / file).stat().st_size for file in set(files) if file)


async def browse(folder: Path, walk: int) -> None:
    from textual.pilot import Pilot

    from workbench.tui.app import MODULE_DELAY, SELECTION_DELAY, WorkbenchApp
    from workbench.tui.panes.modules import ModulesPane
    from workbench.tui.panes.timeline import TimelinePane

    async def settle(pilot: Pilot, delay: float = SELECTION_DELAY) -> None:
        await pilot.pause(delay * 2)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = WorkbenchApp(folder)
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.scanned:
            await pilot.pause(0.1)
        await settle(pilot)
        modules = list(app.dump.modules)
        print(f"phase modules-listed {vm_hwm():.0f} {len(modules)} modules", flush=True)
        pane = app.pane(ModulesPane)
        for module in modules:
            pane.show_module(module.key)
            await settle(pilot, MODULE_DELAY)
        steps = sum(len(m.steps) for m in modules)
        print(f"phase modules-selected {vm_hwm():.0f} {steps} steps' facts", flush=True)
        by_size = sorted(modules, reverse=True,
                         key=lambda m: ir_bytes(folder, [s.file for s in m.steps]))
        first_copy = {m.name: m for m in reversed(modules)}  # the lowest id of each name
        chosen = by_size[:walk] + [m for m in first_copy.values() if m not in by_size[:walk]]
        timeline = app.pane(TimelinePane)
        walked = 0
        for module in chosen:
            pane.show_module(module.key)
            await settle(pilot, MODULE_DELAY)
            for step in module.steps:
                timeline.show_step(step)
                await settle(pilot)
                walked += 1
        print(f"phase timelines-walked {vm_hwm():.0f} {walked} steps of {len(chosen)} modules "
              f"diffed in {time.perf_counter() - started:.0f} s", flush=True)
        await app.action_quit()
    print(f"phase end {vm_hwm():.0f} the whole run", flush=True)


# ----- the report ---------------------------------------------------------------------------

def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1000, help="size of the dump folder")
    parser.add_argument("--walk", type=int, default=2,
                        help="walk the timelines of this many largest modules (and of one "
                             "module of each name)")
    parser.add_argument("--browse", type=Path, help=argparse.SUPPRESS)  # in the child
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # in the child
    parser.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        raise SystemExit(run_measured(args.measure, args.argv))
    if args.browse is not None:
        asyncio.run(browse(args.browse, args.walk))
        return

    folder, what = make_folder(args.size_mb)
    files, size = folder_size(folder)
    print(f"dump: {folder}\n  {files:,} files, {size / 1e6:,.0f} MB: {what}, repeated under "
          f"fresh module ids (cached: delete the folder to rebuild it)")
    print(f"peak RSS, each in its own process (target: under {TARGET_MB} MB):")

    baseline = 0.0

    def show(label: str, rss: float, seconds: float) -> None:
        ratio = f"{rss / baseline:5.2f}x baseline" if baseline else "baseline"
        verdict = "ok" if rss < TARGET_MB else "OVER"
        print(f"  {label:<46} {rss:6.0f} MB  {rss / TARGET_MB:5.0%} of target  {ratio:<16}"
              f" {verdict}  ({seconds:.1f} s)", flush=True)

    rss, seconds = peak_rss(["-c", "import workbench.tui.app"], "baseline")
    show("python -c 'import workbench.tui.app'", rss, seconds)
    baseline = rss
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        listing = Path(tmp) / "ls.json"
        show("workbench ls DIR --json", *peak_rss(["ls", str(folder), "--json"], "ls", listing))
        modules = json.loads(listing.read_text())["modules"]
    show("workbench ls DIR --check", *peak_rss(["ls", str(folder), "--check"], "ls --check"))

    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--browse", str(folder),
                           "--walk", str(args.walk)], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the app's run failed:\n{done.stderr}")
    phases = [line.split(" ", 3)[1:] for line in done.stdout.splitlines()
              if line.startswith("phase ")]
    show("workbench DIR (the app, headless), browsing", float(phases[-1][1]),
         time.perf_counter() - start)
    for name, peak, detail in phases:
        print(f"      {name:<20} peak so far {float(peak):6.0f} MB  ({detail})")

    biggest = max(modules, key=lambda m: ir_bytes(folder, [s["file"] for s in m["steps"]]))
    ir_mb = ir_bytes(folder, [s["file"] for s in biggest["steps"]]) / 1e6
    label = f"{biggest['id']} ({biggest['name']}, {len(biggest['steps'])} steps, {ir_mb:.0f} MB)"
    show("workbench show DIR MODULE --changed", *peak_rss(
        ["show", str(folder), biggest["key"], "--changed"], "show"))
    print(f"      MODULE: {label}")
    executions = biggest["executions"]
    if executions:
        show("workbench bisect DIR MODULE", *peak_rss(
            ["bisect", str(folder), biggest["key"], "--execution", executions[0]["id"]],
            "bisect"))
    else:
        print(f"      no bisection: {biggest['id']} has no execution")
    print(f"  (the folder: {size / 1e6:,.0f} MB; the baseline is Python, Textual and the "
          "workbench imported, nothing read)")


if __name__ == "__main__":
    main()

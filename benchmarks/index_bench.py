"""Index speed against `find DIR -type f`, measured in the same run.

    python benchmarks/index_bench.py [--files 100000] [--repeat 5]

Two folders: the real corpus (tests/data/corpus/xla), and a generated folder of N empty files
whose names are copied from the real dumps with fresh module ids (names are all indexing reads).
For each it prints the best-of-N wall time of:
  - `find DIR -type f | wc -l` (the baseline),
  - `scan(DIR, expand=False)` in this process (the index itself),
  - `workbench ls DIR --json` as a command (includes Python start-up and JSON output),
and the ratios against `find`, in wall time and in CPU time (steadier when other processes
share the machine). DESIGN.md's target: the index within 2x of find.
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbench.index import scan  # noqa: E402

CORPUS_XLA = REPO / "tests" / "data" / "corpus" / "xla"
MODULE_NUMBER = re.compile(r"module_\d{4}")


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """Best wall time and best CPU time of `repeat` runs (CPU time is steadier on a busy
    machine: it does not count the time other processes hold the cores)."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu = cpu_seconds()
        start = time.perf_counter()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_seconds() - cpu)
    return min(walls), min(cpus)


def make_large_folder(target: Path, files: int) -> int:
    """Fill `target` with `files` empty files named like real dump files (fresh module ids)."""
    templates: list[list[str]] = []
    for folder in sorted(CORPUS_XLA.iterdir()):
        by_module: dict[str, list[str]] = {}
        for path in folder.rglob("*"):
            if path.is_file():
                relative = path.relative_to(folder).as_posix()
                match = MODULE_NUMBER.search(relative)
                if match:
                    by_module.setdefault(match.group(), []).append(relative)
        templates.extend(by_module.values())
    written = 0
    module = 0
    while written < files:
        for names in templates:
            new_id = f"module_{module:04d}"
            module += 1
            for name in names:
                path = target / MODULE_NUMBER.sub(new_id, name)
                path.parent.mkdir(exist_ok=True)
                path.touch()
                written += 1
                if written >= files:
                    return written
    return written


def measure(label: str, folder: Path, repeat: int) -> None:
    def run_find() -> None:
        subprocess.run(f"find '{folder}' -type f | wc -l", shell=True, check=True,
                       stdout=subprocess.DEVNULL)

    def run_scan() -> None:
        scan(folder, expand=False)

    def run_cli() -> None:
        subprocess.run([sys.executable, "-m", "workbench", "ls", str(folder), "--json"],
                       check=True, stdout=subprocess.DEVNULL, cwd=REPO)

    find_wall, find_cpu = best_of(repeat, run_find)
    scan_wall, scan_cpu = best_of(repeat, run_scan)
    cli_wall, cli_cpu = best_of(repeat, run_cli)
    startup_wall, _ = best_of(repeat, lambda: subprocess.run(
        [sys.executable, "-c", "import workbench.commands.ls"], check=True, cwd=REPO))
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    modules = len(scan(folder, expand=False).modules)
    print(f"{label}: {files} files, {modules} modules (best of {repeat})")
    print("                           wall ms  ratio |  CPU ms  ratio")
    print(f"  find -type f | wc -l    {find_wall * 1e3:8.1f}  1.00x | {find_cpu * 1e3:7.1f}  1.00x"
          "  (baseline)")
    print(f"  scan() in process       {scan_wall * 1e3:8.1f} {scan_wall / find_wall:5.2f}x | "
          f"{scan_cpu * 1e3:7.1f} {scan_cpu / find_cpu:5.2f}x")
    print(f"  workbench ls --json     {cli_wall * 1e3:8.1f} {cli_wall / find_wall:5.2f}x | "
          f"{cli_cpu * 1e3:7.1f} {cli_cpu / find_cpu:5.2f}x"
          f"  (Python start-up + imports alone: {startup_wall * 1e3:.0f} ms wall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    measure("corpus xla/", CORPUS_XLA, args.repeat)
    with tempfile.TemporaryDirectory(prefix="workbench-index-bench-") as tmp:
        folder = Path(tmp) / "dump"
        folder.mkdir()
        make_large_folder(folder, args.files)
        measure(f"generated ({args.files} names from real dumps)", folder, args.repeat)
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()

"""Index speed against `find DIR -type f`, measured in the same run.

    python benchmarks/index_bench.py [--files 100000] [--repeat 5] [--runs 3] [--dump DIR ...]
                                     [--reference CHECKOUT] [--stages]

Folders: the real corpus (tests/data/corpus/xla), a generated folder of N empty files whose
names are copied from the real dumps with fresh module ids (names are all indexing reads), and
each real dump given with --dump (a JAX test-suite dump of tens of thousands of files). For
each it prints the best-of-N wall and CPU time of:
  - `find DIR -type f | wc -l` (the baseline),
  - `scan(DIR)` in this process (the index itself),
  - `workbench ls DIR --json` as a command (Python start-up, imports and the JSON included),
  - `workbench ls DIR` as a command, into a pipe (the table as plain columns),
and the ratios against `find` (CPU time is steadier when other processes share the machine),
and the floor under both commands: Python start-up and the imports of `workbench ls`.
With --reference, the two commands are timed from that checkout too (a plain copy of another
revision, e.g. `git archive main | tar -x -C /tmp/main`), in the same run.
With --runs R the whole measurement is made R times and the range of each ratio is printed
too, with the load average. The issue's target: both `ls` forms within 2x of find.
With --stages, the CPU time of each stage of `ls --json` on the generated folder is printed
too, per file and against find: the least a Python walk of the folder costs (`os.scandir`,
names only), `list_files`, claiming the listing, making the steps, writing the JSON. With the
start-up floor it says how much of find's time is left for the work per file.
"""

from __future__ import annotations

import argparse
import os
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

from workbench.index import claim_paths, list_files, scan  # noqa: E402
from workbench.model import Dump  # noqa: E402
from workbench.output.json_shapes import write_dump_json  # noqa: E402

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


ROWS = ["scan() in process", "workbench ls --json", "workbench ls (table)"]
FLOOR_ROW = "start-up + imports"
REFERENCE_ROWS = ["reference ls --json", "reference ls (table)"]


def measure(label: str, folder: Path, repeat: int,
            reference: Path | None) -> dict[str, tuple[float, float]]:
    """{row: (wall ratio, CPU ratio) against find}, after printing the run's table."""

    def run_find() -> None:
        subprocess.run(f"find '{folder}' -type f | wc -l", shell=True, check=True,
                       stdout=subprocess.DEVNULL)

    def command(*flags: str, checkout: Path = REPO) -> Callable[[], None]:
        environment = {**os.environ, "PYTHONPATH": str(checkout)}
        return lambda: subprocess.run(
            [sys.executable, "-m", "workbench", "ls", str(folder), *flags],
            check=True, stdout=subprocess.DEVNULL, cwd=checkout, env=environment)

    find_wall, find_cpu = best_of(repeat, run_find)
    times = {
        ROWS[0]: best_of(repeat, lambda: scan(folder)),
        ROWS[1]: best_of(repeat, command("--json")),
        ROWS[2]: best_of(repeat, command()),
    }
    if reference is not None:
        times[REFERENCE_ROWS[0]] = best_of(repeat, command("--json", checkout=reference))
        times[REFERENCE_ROWS[1]] = best_of(repeat, command(checkout=reference))
    # The floor of both commands: Python start-up and the imports of `workbench ls`, run as
    # the commands are (`-m workbench` imports the command line too).
    times[FLOOR_ROW] = best_of(repeat, lambda: subprocess.run(
        [sys.executable, "-c", "import workbench.cli, workbench.commands.ls"], check=True,
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}))
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    modules = len(scan(folder, expand=False).modules)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{label}: {files} files, {modules} modules (best of {repeat}; load average {load})")
    print("                           wall ms  ratio |  CPU ms  ratio")
    print(f"  find -type f | wc -l    {find_wall * 1e3:8.1f}  1.00x | {find_cpu * 1e3:7.1f}  1.00x"
          "  (baseline)")
    ratios = {}
    for row, (wall, cpu) in times.items():
        ratios[row] = (wall / find_wall, cpu / find_cpu)
        print(f"  {row:<22}{wall * 1e3:8.1f} {wall / find_wall:5.2f}x | "
              f"{cpu * 1e3:7.1f} {cpu / find_cpu:5.2f}x")
    return ratios


def bare_walk(folder: Path) -> list[str]:
    """Every entry name under `folder` by `os.scandir`, with no test: the least a walk in
    Python costs."""
    names: list[str] = []
    stack = [os.fspath(folder)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                names.append(entry.name)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return names


def measure_stages(folder: Path, repeat: int) -> None:
    """Print the best CPU time of each stage of `ls --json` on `folder`, against find."""
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    _, find_cpu = best_of(repeat, lambda: subprocess.run(
        f"find '{folder}' -type f | wc -l", shell=True, check=True, stdout=subprocess.DEVNULL))
    paths = list_files(folder, [])

    def claimed() -> Dump:
        return claim_paths(Dump(root=folder), list(paths))

    def make_steps(dump: Dump) -> None:
        for module in dump.modules:
            module.steps  # noqa: B018 (made when first read)

    claim_cpu = best_of(repeat, claimed)[1]
    written = claimed()
    make_steps(written)
    stages = {
        "os.scandir walk (bare)": best_of(repeat, lambda: bare_walk(folder))[1],
        "list_files": best_of(repeat, lambda: list_files(folder, []))[1],
        "claim the listing": claim_cpu,
        "make the steps": best_of(repeat, lambda: make_steps(claimed()))[1] - claim_cpu,
        "write the JSON": best_of(repeat, lambda: write_dump_json(written, len))[1],
    }
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"stages of ls --json in process: {files} files (best of {repeat}; load average "
          f"{load})")
    print(f"  find -type f | wc -l    {find_cpu * 1e3:7.1f} ms CPU  1.00x")
    for stage, cpu in stages.items():
        print(f"  {stage:<22}  {cpu * 1e3:7.1f} ms CPU {cpu / find_cpu:5.2f}x "
              f"{cpu / files * 1e6:6.2f} us/file")


def print_ranges(label: str, runs: list[dict[str, tuple[float, float]]]) -> None:
    print(f"{label}: ratio to find over {len(runs)} runs (min-max)")
    for row in [row for row in [*ROWS, *REFERENCE_ROWS, FLOOR_ROW] if row in runs[0]]:
        walls = [run[row][0] for run in runs]
        cpus = [run[row][1] for run in runs]
        print(f"  {row:<22} wall {min(walls):5.2f}x-{max(walls):5.2f}x | "
              f"CPU {min(cpus):5.2f}x-{max(cpus):5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--dump", type=Path, action="append", default=[],
                        help="a real dump folder to measure too (repeatable)")
    parser.add_argument("--reference", type=Path,
                        help="another checkout whose `ls` commands are timed too")
    parser.add_argument("--stages", action="store_true",
                        help="time each stage of `ls --json` on the generated folder too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="workbench-index-bench-") as tmp:
        generated = Path(tmp) / "dump"
        generated.mkdir()
        make_large_folder(generated, args.files)
        folders = [("corpus xla/", CORPUS_XLA),
                   (f"generated ({args.files} names from real dumps)", generated),
                   *((f"real dump {dump}", dump) for dump in args.dump)]
        results: dict[str, list[dict[str, tuple[float, float]]]] = {}
        for _ in range(args.runs):
            for label, folder in folders:
                results.setdefault(label, []).append(measure(label, folder, args.repeat,
                                                               args.reference))
            if args.stages:
                measure_stages(generated, args.repeat)
        shutil.rmtree(generated)
    if args.runs > 1:
        for label, runs in results.items():
            print_ranges(label, runs)


if __name__ == "__main__":
    main()

"""Index speed against `find DIR -type f`, measured in the same run.

    python benchmarks/index_bench.py [--files 100000] [--repeat 5]

Two folders: the real corpus (tests/data/corpus/xla), and a generated folder of N empty files
whose names are copied from the real dumps with fresh module ids (names are all indexing reads).
For each it prints the best-of-N wall time of:
  - `find DIR -type f | wc -l` (the baseline),
  - `scan(DIR, expand=False)` in this process (the index itself),
  - `workbench ls DIR --json` as a command (includes Python start-up and JSON output),
and the ratios against `find`. DESIGN.md's target: the index within 2x of find.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbench.index import scan  # noqa: E402

CORPUS_XLA = REPO / "tests" / "data" / "corpus" / "xla"
MODULE_NUMBER = re.compile(r"module_\d{4}")


def best_of(repeat: int, run: callable) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


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

    find_s = best_of(repeat, run_find)
    scan_s = best_of(repeat, run_scan)
    cli_s = best_of(repeat, run_cli)
    startup_s = best_of(repeat, lambda: subprocess.run(
        [sys.executable, "-c", "import workbench.commands.ls"], check=True, cwd=REPO))
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    modules = len(scan(folder, expand=False).modules)
    print(f"{label}: {files} files, {modules} modules")
    print(f"  find -type f | wc -l     {find_s * 1000:8.1f} ms   (baseline)")
    print(f"  scan() in process        {scan_s * 1000:8.1f} ms   ratio {scan_s / find_s:5.2f}x")
    print(f"  workbench ls --json      {cli_s * 1000:8.1f} ms   ratio {cli_s / find_s:5.2f}x "
          f"(of which Python start-up + imports {startup_s * 1000:.0f} ms)")


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

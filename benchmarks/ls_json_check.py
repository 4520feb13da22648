"""`workbench ls --json` byte for byte against another checkout of the project.

    python benchmarks/ls_json_check.py REFERENCE_CHECKOUT [FOLDER ...]

Runs `python -m workbench ls FOLDER --json` with this checkout and with REFERENCE_CHECKOUT (a
plain copy of another revision, e.g. `git archive main | tar -x -C /tmp/main`) on every folder
given and every folder up to two levels below it (default: tests/data/corpus and examples),
and prints the folders whose outputs differ. Exit status 1 when any does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def ls_json(checkout: Path, folder: Path) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-m", "workbench", "ls", str(folder), "--json"],
                          env=env, capture_output=True, cwd=checkout)
    return done.stdout + b"\nexit %d\n" % done.returncode


def folders_under(top: Path, depth: int = 2) -> list[Path]:
    found = [top]
    if depth > 0:
        for child in sorted(top.iterdir()):
            if child.is_dir() and not child.is_symlink():
                found += folders_under(child, depth - 1)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("folders", type=Path, nargs="*",
                        default=[REPO / "tests" / "data" / "corpus", REPO / "examples"])
    args = parser.parse_args()
    differing = 0
    compared = 0
    for top in args.folders:
        for folder in folders_under(top.resolve()):
            compared += 1
            if ls_json(REPO, folder) != ls_json(args.reference.resolve(), folder):
                differing += 1
                print(f"differs: {folder}")
    print(f"{compared} folders compared, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

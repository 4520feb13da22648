"""Normalized diff vs GNU diff, measured in the same run.

    python benchmarks/diff_bench.py [XLA_DUMP_DIR]

Pair 1: the two consecutive per-pass HLO texts with the most lines in XLA_DUMP_DIR (a large
dump made by tests/data/corpus/xla-large/program.py; default: the cache folder
~/.cache/workbench-bench/xla-large, else the largest pair of the test corpus, and it says so).
Pair 2: a generated 100,000-line MLIR pair (functions, nested regions, one side renumbered by
inserted constants, plus real edits), written to a temporary folder.
Times: best of 5; ours = read both files + normalize + diff + unified rendering, in process;
GNU = `diff -u` as a subprocess (its process start included).
"""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.diff.ir_diff import diff_normalized
from workbench.diff.normalize import normalize
from workbench.diff.render import unified

CACHE = Path.home() / ".cache/workbench-bench/xla-large"
CORPUS = Path(__file__).parents[1] / "tests/data/corpus/xla"


def largest_pair(folder: Path) -> tuple[Path, Path] | None:
    steps: dict[str, list[tuple[int, Path]]] = {}
    for path in folder.glob("*.txt"):
        match = re.match(r"(module_\d+\.[^.]+)\.(\d{4})\.", path.name)
        if match:
            steps.setdefault(match.group(1), []).append((int(match.group(2)), path))
    best = None
    for items in steps.values():
        items.sort()
        for (_, a), (_, b) in itertools.pairwise(items):
            size = a.stat().st_size + b.stat().st_size
            if best is None or size > best[0]:
                best = (size, a, b)
    return (best[1], best[2]) if best else None


def mlir_text(functions: int, shifted: bool, rng: random.Random) -> str:
    out = ["#map = affine_map<(d0, d1) -> (d0, d1)>", "module @bench {"]
    for f in range(functions):
        out.append(f"  func.func @f{f}(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) "
                   "-> tensor<4x8xf32> {")
        n = 0
        if shifted and f % 3 == 0:
            out.append("    %cst = arith.constant 3.000000e+00 : f32")
            out.append(f"    %{n} = tensor.empty() : tensor<4x8xf32>")
            n += 1
        cst = "%cst_0" if shifted and f % 3 == 0 else "%cst"
        out.append(f"    {cst} = arith.constant 1.000000e+00 : f32")
        prev = "%arg0"
        for i in range(9):
            op = "arith.mulf" if shifted and rng.random() < 0.01 else "arith.addf"
            out.append(f"    %{n} = tensor.empty() : tensor<4x8xf32>")
            out.append(f"    %{n + 1} = linalg.generic {{indexing_maps = [#map, #map], "
                       f"iterator_types = [\"parallel\", \"parallel\"]}} ins({prev} : "
                       f"tensor<4x8xf32>) outs(%{n} : tensor<4x8xf32>) {{")
            out.append("    ^bb0(%in: f32, %out: f32):")
            out.append(f"      %{n + 2 + i % 2} = {op} %in, {cst} : f32")
            out.append(f"      linalg.yield %{n + 2 + i % 2} : f32")
            out.append("    } -> tensor<4x8xf32>")
            prev = f"%{n + 1}"
            n += 2
        out.append(f"    return {prev} : tensor<4x8xf32>")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def best_of(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def ours(a: Path, b: Path) -> int:
    diff = diff_normalized(normalize(a.read_text()), normalize(b.read_text()))
    return len(unified(diff, str(a), str(b)))


def gnu(a: Path, b: Path) -> None:
    subprocess.run(["diff", "-u", str(a), str(b)], stdout=subprocess.DEVNULL, check=False)


def measure(label: str, a: Path, b: Path) -> None:
    lines = sum(1 for _ in a.open()), sum(1 for _ in b.open())
    theirs = best_of(5, lambda: gnu(a, b))
    mine = best_of(5, lambda: ours(a, b))
    raw = subprocess.run(["diff", str(a), str(b)], capture_output=True, text=True).stdout
    changed = sum(1 for line in raw.splitlines() if line[:1] in "<>")
    shown = ours(a, b)
    print(f"{label}: {lines[0]} / {lines[1]} lines")
    print(f"  GNU diff -u        {theirs * 1000:8.1f} ms   ({changed} changed lines)")
    print(f"  workbench diff     {mine * 1000:8.1f} ms   ({shown} output lines, normalized)")
    print(f"  ratio              {mine / theirs:8.2f}x  (target: <= 2x)")


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE
    pair = largest_pair(folder) if folder.is_dir() else None
    if pair is None:
        print(f"no large dump in {folder}; falling back to the largest pair of the corpus "
              "(make one with tests/data/corpus/xla-large/program.py, see the corpus README)")
        candidates = [p for d in CORPUS.iterdir() if d.is_dir() for p in [largest_pair(d)] if p]
        pair = max(candidates, key=lambda p: p[0].stat().st_size + p[1].stat().st_size)
    measure(f"HLO {pair[0].name} -> {pair[1].name.split('.')[2]}", *pair)
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.mlir", Path(tmp) / "b.mlir"
        a.write_text(mlir_text(1700, False, rng))
        b.write_text(mlir_text(1700, True, rng))
        measure("MLIR generated pair", a, b)


if __name__ == "__main__":
    main()

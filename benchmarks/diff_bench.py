"""Normalized IR diff against GNU `diff -u`, measured in the same run.

    python benchmarks/diff_bench.py [--dump DIR | --layers 4] [--runs 9] [--concat 18]

HLO pairs: neighbouring per-pass text dumps (by XLA step number) of one module of a large
real dump: the transformer training step of `tests/data/corpus/xla-large/program.py`, made
with JAX in the cache folder when missing (see large_dump.py), or the folder given with
--dump. Only pairs whose files differ count. The module is the one with the largest such
pair; from its pairs the script takes the largest (most lines), the one with the most changed
lines, the one with the fewest and the median (changed lines as GNU diff counts them).
Without JAX and without a dump it falls back to the test corpus and says so.

Command rows: `workbench diff A B` as a command (Python start-up and imports included) against
`diff -u`, on the largest and the most-changed pair each concatenated --concat times (files of
about 100,000 lines, a test suite's worth of modules in one file).

MLIR pair: a generated 100,000-line module and a copy with an op inserted at the top of every
third function (renumbering everything below it) and one op in a hundred changed.

`ends`: the share of the lines in the identical head and tail of the pair, which is all that
skipping those before normalizing could save.

Times are the best of --runs. Ours: read both files (as `workbench diff` does) + normalize +
diff + unified rendering, in this process, nothing cached. GNU: `diff -u` as a subprocess,
its process start included. Wall time is the target's measure; CPU time (ours: this
process; GNU: the child's user + system time) is printed beside it because a shared, busy
machine inflates wall times unevenly.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_dump import MissingJax, make_dump

from workbench.diff.ir_diff import diff_normalized
from workbench.diff.normalize import normalize
from workbench.diff.render import unified
from workbench.loader import read_text
from workbench.model import Source

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests/data/corpus/xla"
_PER_PASS = re.compile(r"(module_\d+\.[^.]+)\.(\d{4})\.")


@dataclass
class Pair:
    a: Path
    b: Path
    lines: int  # lines of both files
    changed: int  # lines GNU diff marks with < or >


def changed_pairs(folder: Path) -> dict[str, list[Pair]]:
    """Neighbouring per-pass text dumps that differ, by module."""
    steps: dict[str, list[tuple[int, Path]]] = {}
    for path in folder.glob("*.txt"):
        match = _PER_PASS.match(path.name)
        if match:
            steps.setdefault(match.group(1), []).append((int(match.group(2)), path))
    out: dict[str, list[Pair]] = {}
    for module, items in steps.items():
        items.sort()
        for (_, a), (_, b) in pairwise(items):
            if a.read_bytes() == b.read_bytes():
                continue
            result = subprocess.run(["diff", str(a), str(b)], capture_output=True, text=True)
            changed = sum(1 for line in result.stdout.splitlines() if line[:1] in "<>")
            lines = a.read_bytes().count(b"\n") + b.read_bytes().count(b"\n")
            out.setdefault(module, []).append(Pair(a, b, lines, changed))
    return out


def representative(pairs: list[Pair]) -> list[tuple[str, Pair]]:
    """The largest pair, the most and fewest changed lines, the median (no repeats)."""
    by_changed = sorted(pairs, key=lambda p: p.changed)
    chosen = [("largest", max(pairs, key=lambda p: p.lines)),
              ("most changed", by_changed[-1]),
              ("median changed", by_changed[len(by_changed) // 2]),
              ("fewest changed", by_changed[0])]
    out: list[tuple[str, Pair]] = []
    for label, pair in chosen:
        if all(pair is not other for _, other in out):
            out.append((label, pair))
    return out


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


def identical_ends(a: Path, b: Path) -> float:
    """The share of both files' lines in their identical head and tail: all that skipping
    those before normalizing could save."""
    lines_a, lines_b = a.read_bytes().splitlines(), b.read_bytes().splitlines()
    shorter = min(len(lines_a), len(lines_b))
    head = 0
    while head < shorter and lines_a[head] == lines_b[head]:
        head += 1
    tail = 0
    while tail < shorter - head and lines_a[-1 - tail] == lines_b[-1 - tail]:
        tail += 1
    return 2 * (head + tail) / max(1, len(lines_a) + len(lines_b))


def ours(a: Path, b: Path) -> int:
    text_a = read_text(a.parent, Source(a.name))
    text_b = read_text(b.parent, Source(b.name))
    diff = diff_normalized(normalize(text_a), normalize(text_b))
    return len(unified(diff, str(a), str(b)))


def gnu(a: Path, b: Path) -> None:
    subprocess.run(["diff", "-u", str(a), str(b)], stdout=subprocess.DEVNULL, check=False)


def command(a: Path, b: Path) -> None:
    subprocess.run([sys.executable, "-m", "workbench", "diff", str(a), str(b)],
                   stdout=subprocess.DEVNULL, check=False, cwd=REPO)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best(runs: int, work: Callable[[], object], child: bool) -> tuple[float, float]:
    """(best wall time, best CPU time) of `runs` runs, in seconds."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu = _children_cpu() if child else time.process_time()
        start = time.perf_counter()
        work()
        walls.append(time.perf_counter() - start)
        cpus.append((_children_cpu() if child else time.process_time()) - cpu)
    return min(walls), min(cpus)


def measure(label: str, a: Path, b: Path, changed: int, runs: int,
            as_command: bool = False) -> tuple[float, float]:
    gnu_wall, gnu_cpu = best(runs, lambda: gnu(a, b), child=True)
    if as_command:
        our_wall, our_cpu = best(runs, lambda: command(a, b), child=True)
    else:
        our_wall, our_cpu = best(runs, lambda: ours(a, b), child=False)
    newline = b"\n"
    lines = f"{a.read_bytes().count(newline)}/{b.read_bytes().count(newline)}"
    print(f"{label:<44} {lines:>13} {changed:>7} {gnu_wall * 1e3:8.1f} {our_wall * 1e3:8.1f} "
          f"{our_wall / gnu_wall:6.2f}x {gnu_cpu * 1e3:8.1f} {our_cpu * 1e3:8.1f} "
          f"{our_cpu / gnu_cpu:6.2f}x {identical_ends(a, b):6.1%}   {ours(a, b)}")
    return our_wall / gnu_wall, our_cpu / gnu_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, help="an XLA dump folder (default: the large one)")
    parser.add_argument("--layers", type=int, default=4, help="layers of the large dump")
    parser.add_argument("--runs", type=int, default=9, help="runs per measurement (best of)")
    parser.add_argument("--concat", type=int, default=18,
                        help="copies of a pair's files concatenated for the command rows")
    args = parser.parse_args()
    folder = args.dump
    if folder is None:
        try:
            folder = make_dump(args.layers)
        except MissingJax as error:
            print(f"{error}\nfalling back to the test corpus (small pairs: not the target's "
                  "measure)")
    groups: dict[str, list[Pair]] = {}
    for candidate in ([folder] if folder else [p for p in CORPUS.iterdir() if p.is_dir()]):
        for module, pairs in changed_pairs(candidate).items():
            groups[f"{candidate.name}/{module}"] = pairs
    if not groups:
        print(f"no per-pass HLO text dumps that differ in {folder}")
        return 2
    module = max(groups, key=lambda m: max(p.lines for p in groups[m]))
    pairs = groups[module]
    print(f"HLO: {module}, {len(pairs)} neighbouring per-pass dumps that differ "
          f"(median {statistics.median(p.changed for p in pairs):.0f} changed lines)")
    print(f"{'pair':<44} {'lines a/b':>13} {'changed':>7} {'GNU ms':>8} {'ours ms':>8} "
          f"{'wall':>7} {'GNU cpu':>8} {'our cpu':>8} {'cpu':>7} {'ends':>6}   output lines")
    ratios = []
    chosen = representative(pairs)
    for label, pair in chosen:
        steps = f"{_PER_PASS.match(pair.a.name).group(2)}->"  # type: ignore[union-attr]  # every chosen file is a per-pass step
        steps += _PER_PASS.match(pair.b.name).group(2)  # type: ignore[union-attr]  # every chosen file is a per-pass step
        ratios.append(measure(f"{label} {steps}", pair.a, pair.b, pair.changed, args.runs))
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        for label, pair in chosen:
            if label not in ("largest", "most changed"):
                continue
            a, b = Path(tmp) / f"a-{len(ratios)}.txt", Path(tmp) / f"b-{len(ratios)}.txt"
            a.write_bytes(pair.a.read_bytes() * args.concat)
            b.write_bytes(pair.b.read_bytes() * args.concat)
            ratios.append(measure(f"`workbench diff` {label} x{args.concat}", a, b,
                                  pair.changed * args.concat, max(3, args.runs // 3),
                                  as_command=True))
        a, b = Path(tmp) / "a.mlir", Path(tmp) / "b.mlir"
        a.write_text(mlir_text(1700, False, rng))
        b.write_text(mlir_text(1700, True, rng))
        result = subprocess.run(["diff", str(a), str(b)], capture_output=True, text=True)
        changed = sum(1 for line in result.stdout.splitlines() if line[:1] in "<>")
        ratios.append(measure("MLIR generated 100k lines", a, b, changed, max(3, args.runs // 3)))
    print(f"target: normalized diff within 2x of GNU diff's wall time; worst ratio here: "
          f"{max(r[0] for r in ratios):.2f}x wall, {max(r[1] for r in ratios):.2f}x CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Where a bisection's time goes: CPU seconds per evaluation kind and per op kind, against
another checkout measured in the same run.

    python benchmarks/bisect_profile.py DUMP MODULE [--baseline CHECKOUT] [--repeat 2]
                                        [--ops 12] [-- BISECT OPTIONS]

`workbench bisect DUMP MODULE --fake-data` runs in a child process of this checkout (and of
`--baseline`, alternately, `--repeat` times each: the medians are printed). The child counts,
for each evaluation (the reference, each step, the f64 truth and its perturbed twin, each
random-rounding sample and the split sample), the CPU time of the process (user + system,
`time.process_time`) and the CPU time inside each op's handler, exclusive of the ops it runs
(a fusion's body counts as its own ops). What is left of an evaluation outside the handlers
is the interpreter's own work and, in the noise stage, the random rounding and its ranges.
CPU time, not wall time: a shared machine's load then counts far less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(arguments: list[str]) -> None:
    """Run the bisect in this process with the counters on; print them as one JSON line."""
    from workbench.blas_threads import one_blas_thread_unless_set

    one_blas_thread_unless_set()  # as the CLI does, before numpy is imported
    import time

    import workbench.replay.hlo  # noqa: F401 (registers every handler)
    from workbench.replay import steps
    from workbench.replay.hlo import registry
    from workbench.replay.hlo.interpreter import Interpreter

    evaluations: list[dict] = []
    phase = {"name": "start"}
    inner: list[float] = []
    current: dict[str, float] | None = None

    def timed(opcode: str, handler):
        def run(interpreter, instruction, operands):
            start = time.process_time()
            inner.append(0.0)
            try:
                return handler(interpreter, instruction, operands)
            finally:
                nested = inner.pop()
                spent = time.process_time() - start
                if inner:
                    inner[-1] += spent
                if current is not None:
                    current[opcode] = current.get(opcode, 0.0) + spent - nested
        return run

    for opcode, handler in list(registry.HANDLERS.items()):
        registry.HANDLERS[opcode] = timed(opcode, handler)

    original_phase = steps.Replay._phase

    def on_phase(self, what, *args, **kwargs):
        phase["name"] = what
        return original_phase(self, what, *args, **kwargs)

    steps.Replay._phase = on_phase
    original_call = Interpreter.call
    depth = [0]

    def call(self, name, arguments):
        nonlocal current
        if depth[0]:
            return original_call(self, name, arguments)
        depth[0] += 1
        current = {}
        start = time.process_time()
        try:
            return original_call(self, name, arguments)
        finally:
            depth[0] -= 1
            evaluations.append({"phase": phase["name"], "cpu": time.process_time() - start,
                                "ops": current})
            current = None

    Interpreter.call = call
    from workbench.cli import main

    start = time.process_time()
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            code = main(["bisect", *arguments])
        finally:
            sys.stdout = stdout
    print(json.dumps({"code": code, "cpu": time.process_time() - start,
                      "evaluations": evaluations}))


def kinds(evaluations: list[dict]) -> list[tuple[str, dict]]:
    """The evaluations named by kind: the noise stage's are its samples, the last one the
    split sample."""
    named: list[tuple[str, dict]] = []
    noise = [e for e in evaluations if e["phase"] == "random rounding"]
    for evaluation in evaluations:
        name = evaluation["phase"]
        if name == "random rounding":
            position = noise.index(evaluation)
            name = "split sample" if position == len(noise) - 1 else "rr sample"
        named.append((name, evaluation))
    return named


def measure(checkout: Path, arguments: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "PYTHONPATH": str(checkout), "XDG_CACHE_HOME": cache}
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--",
                               *arguments], env=environment, capture_output=True, text=True,
                              check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{checkout}: the bisect printed nothing\n{done.stderr[-2000:]}")
    return json.loads(lines[-1])


def summary(runs: list[dict]) -> tuple[float, dict[str, tuple[int, float]], dict[str, float],
                                       float]:
    """Median total CPU, per kind (count, median CPU), per op (median CPU), and the median
    CPU outside any evaluation."""
    totals = [run["cpu"] for run in runs]
    per_kind: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = {}
    per_op: dict[str, list[float]] = defaultdict(list)
    outside = []
    for run in runs:
        by_kind: dict[str, float] = defaultdict(float)
        by_op: dict[str, float] = defaultdict(float)
        named = kinds(run["evaluations"])
        for name, evaluation in named:
            by_kind[name] += evaluation["cpu"]
            for opcode, seconds in evaluation["ops"].items():
                by_op[opcode] += seconds
        for name, seconds in by_kind.items():
            per_kind[name].append(seconds)
            counts[name] = sum(1 for n, _ in named if n == name)
        for opcode, seconds in by_op.items():
            per_op[opcode].append(seconds)
        outside.append(run["cpu"] - sum(e["cpu"] for e in run["evaluations"]))
    return (statistics.median(totals),
            {k: (counts[k], statistics.median(v)) for k, v in per_kind.items()},
            {k: statistics.median(v) for k, v in per_op.items()},
            statistics.median(outside))


def main() -> int:
    if "--child" in sys.argv:
        child(sys.argv[sys.argv.index("--") + 1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path)
    parser.add_argument("module")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--ops", type=int, default=12, help="how many op kinds to list")
    own, extra = sys.argv[1:], ["--fake-data"]
    if "--" in own:  # after --: the bisect's own options instead of --fake-data
        own, extra = own[:own.index("--")], own[own.index("--") + 1:]
    args = parser.parse_args(own)
    arguments = [str(args.dump), args.module, *extra]
    checkouts = {"this checkout": HERE.parent}
    if args.baseline is not None:
        checkouts["baseline"] = args.baseline.resolve()
    runs: dict[str, list[dict]] = {name: [] for name in checkouts}
    for _ in range(args.repeat):  # alternately, so drifting load hits both alike
        for name, checkout in checkouts.items():
            runs[name].append(measure(checkout, arguments))
    load = os.getloadavg()[0]
    print(f"workbench bisect {' '.join(arguments)}: CPU seconds (user + system), median of "
          f"{args.repeat}; load average {load:.1f} on {os.cpu_count()} cores")
    results = {name: summary(r) for name, r in runs.items()}
    names = list(checkouts)
    header = "".join(f"{name:>16}" for name in names)
    ratio = "  ratio" if len(names) == 2 else ""
    print(f"  {'':36}{header}{ratio}")

    def row(label: str, values: list[float]) -> None:
        text = "".join(f"{v:16.3f}" for v in values)
        if len(values) == 2 and values[1] > 0:
            text += f"  {values[0] / values[1]:5.2f}x"
        print(f"  {label:36}{text}")

    row("whole bisect", [results[n][0] for n in names])
    row("outside evaluations", [results[n][3] for n in names])
    kind_names = list(dict.fromkeys(k for n in names for k in results[n][1]))
    for kind in kind_names:
        count = max(results[n][1].get(kind, (0, 0.0))[0] for n in names)
        row(f"{kind} (x{count})", [results[n][1].get(kind, (0, 0.0))[1] for n in names])
    print("  in the op handlers, all evaluations:")
    first = results[names[0]][2]
    for opcode in sorted(first, key=lambda o: -first[o])[:args.ops]:
        row(f"  {opcode}", [results[n][2].get(opcode, 0.0) for n in names])
    codes = {name: [run["code"] for run in r] for name, r in runs.items()}
    print(f"  exit status: {codes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

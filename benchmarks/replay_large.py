"""Replay speed on a large real dump: seconds per step evaluation, per bisection, and the HLO
evaluator's overhead per instruction beyond numpy's own work.

    python benchmarks/replay_large.py [--dump DIR | --layers 4] [--module KEY] [--triage]

Without --dump it makes (or reuses) the transformer training-step dump of
`tests/data/corpus/xla-large/program.py` with JAX, in the cache folder (see large_dump.py),
and benchmarks its largest module (most HLO instructions in its reference step) on its first
execution. Baselines are measured in the same run:

- step evaluation: loading a step (proto read and conversion) is timed apart from evaluating
  it; a sample of steps spread over the timeline is evaluated;
- bisection: its wall time against the time a linear replay of every step would take (the
  sampled mean per step times the number of steps);
- overhead per instruction: the evaluation time of the reference step minus the time spent
  inside numpy's C functions (measured with cProfile in a second run), divided by the number
  of instructions executed. Python-level parts of numpy count as overhead, so it is an
  upper bound.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_dump import MissingJax, make_dump

from workbench.hlo_ir import HloModule
from workbench.index import scan
from workbench.model import Dump, Module
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.bisect import bisect_replay, evaluation_bound
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.steps import Replay


def largest_module(dump: Dump) -> Module:
    """The module with an execution whose reference step file is the largest (the index
    reads no file, so size on disk stands in for instruction count)."""
    candidates = []
    for module in dump.modules:
        steps = module.ir_steps("hlo")
        source = (steps[0].proto or steps[0].text) if steps else None
        if module.executions and source is not None:
            candidates.append((dump.path(source.file).stat().st_size, module.key, module))
    if not candidates:
        raise SystemExit("no module with an execution and HLO steps in this dump")
    return max(candidates)[2]


def executed_instructions(hlo: HloModule, arguments: list) -> int:
    """How many instructions one evaluation executes (fusion bodies, loop iterations...).

    Counted by wrapping the evaluator's plan runner for one run; computations it evaluates in
    batched form count each instruction once per call, as they are dispatched once.
    """
    from workbench.replay.hlo import evaluate_module, interpreter

    original = interpreter.Interpreter._run
    counter = [0]

    def counting(self, plan, args):  # type: ignore[no-untyped-def]
        counter[0] += len(plan.steps)
        return original(self, plan, args)

    interpreter.Interpreter._run = counting  # type: ignore[method-assign]
    try:
        evaluate_module(hlo, arguments)
    finally:
        interpreter.Interpreter._run = original  # type: ignore[method-assign]
    return counter[0]


def numpy_seconds(hlo: HloModule, arguments: list) -> tuple[float, float]:
    """(seconds inside numpy/ml_dtypes C functions, profiled total) for one evaluation."""
    from workbench.replay.hlo import evaluate_module

    profile = cProfile.Profile()
    profile.enable()
    evaluate_module(hlo, arguments)
    profile.disable()
    stats = pstats.Stats(profile)
    inside = 0.0
    for (filename, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if filename == "~" and ("numpy" in name or "ml_dtypes" in name):
            inside += row[2]  # tottime: time in the function itself
    return inside, stats.total_tt  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, help="an existing dump (default: generate one)")
    parser.add_argument("--layers", type=int, default=4, help="transformer layers (default 4)")
    parser.add_argument("--module", help="module to benchmark (default: the largest)")
    parser.add_argument("--samples", type=int, default=5, help="steps to time (default 5)")
    parser.add_argument("--triage", action="store_true",
                        help="also time `triage` of the whole dump with 2 worker processes")
    args = parser.parse_args()
    try:
        root = args.dump or make_dump(args.layers)
    except MissingJax as error:
        print(f"replay_large: {error}", file=sys.stderr)
        return 3
    start = time.perf_counter()
    dump = scan(root)
    print(f"dump: {root}: {len(dump.modules)} modules, indexed in "
          f"{time.perf_counter() - start:.2f} s")
    module = dump.find_module(args.module) if args.module else largest_module(dump)
    backend = open_backend(dump.root, module)
    assert isinstance(backend, HloBackend)
    steps = backend.steps()
    execution = module.executions[0]
    inputs = resolve_inputs(backend, execution, InputSpec())
    reference_hlo = backend.load(steps[0])
    print(f"module: {module.key} ({module.name}): {len(steps)} HLO steps, "
          f"{reference_hlo.instruction_count()} instructions in the reference step, "
          f"execution {execution.id}")

    # Per step: loading vs evaluating, on a sample spread over the timeline.
    count = min(args.samples, len(steps))
    sample = sorted({round(i * (len(steps) - 1) / max(1, count - 1)) for i in range(count)})
    load_times, eval_times = [], []
    from workbench.replay.hlo import evaluate_module

    for position in sample:
        step = steps[position]
        begin = time.perf_counter()
        hlo = backend.load(step)
        loaded = time.perf_counter()
        evaluate_module(hlo, inputs.arguments)
        done = time.perf_counter()
        load_times.append(loaded - begin)
        eval_times.append(done - loaded)
        print(f"  step {step.index:3d} {step.label:<45} {hlo.instruction_count():6d} instr  "
              f"load {loaded - begin:6.3f} s  evaluate {done - loaded:6.3f} s")
    per_step = statistics.mean(load_times) + statistics.mean(eval_times)
    print(f"per step: load {statistics.mean(load_times):.3f} s + evaluate "
          f"{statistics.mean(eval_times):.3f} s = {per_step:.3f} s (mean of {len(sample)})")

    # Bisection, with a fresh replay (module loads stay in the loader's cache, as in real use).
    begin = time.perf_counter()
    with Replay(backend, inputs) as replay:
        verdict = bisect_replay(replay)
    bisect_seconds = time.perf_counter() - begin
    linear_estimate = per_step * len(steps)
    print(f"bisection: {bisect_seconds:.2f} s, {verdict.evaluations} evaluations (bound "
          f"{evaluation_bound(len(steps))}), status {verdict.status}; a linear replay of all "
          f"{len(steps)} steps takes about {linear_estimate:.1f} s: ratio "
          f"{bisect_seconds / linear_estimate:.2f}")
    print(f"  {verdict.detail}")

    # Overhead per instruction, on the reference step.
    hlo = reference_hlo
    begin = time.perf_counter()
    evaluate_module(hlo, inputs.arguments)
    plain = time.perf_counter() - begin
    executed = executed_instructions(hlo, inputs.arguments)
    inside_numpy, profiled = numpy_seconds(hlo, inputs.arguments)
    overhead = max(0.0, plain - inside_numpy)
    print(f"overhead: reference step evaluates in {plain:.3f} s, {inside_numpy:.3f} s of it in "
          f"numpy (profiled run: {profiled:.3f} s); {executed} instructions executed: "
          f"{overhead / max(1, executed) * 1e6:.1f} us per instruction beyond numpy "
          f"(target: well under 50 us); evaluation / numpy work = "
          f"{plain / max(inside_numpy, 1e-9):.2f}")

    if args.triage:
        from workbench.replay.triage import triage

        begin = time.perf_counter()
        results = triage(dump, jobs=2, time_limit=3600)
        seconds = time.perf_counter() - begin
        counts: dict[str, int] = {}
        for result in results:
            counts[result.status] = counts.get(result.status, 0) + 1
        print(f"triage of the whole dump, 2 workers: {seconds:.1f} s for {len(results)} "
              f"executions ({counts})")
        for result in results:
            if result.status != "ok":
                print(f"  {result.status}: {result.module} {result.execution}: {result.detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

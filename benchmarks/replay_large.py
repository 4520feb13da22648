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
- overhead per instruction: the reference step is evaluated once with its opcode handlers
  timed, then once with each handler returning the value recorded in the first run (the
  interpreter's own cost per instruction: plans, dispatch, checks; CPU time, best of 5, so a
  busy machine does not inflate it); that plus the median cost
  of an instruction on at most 16 elements (where numpy has next to nothing to do) is the
  cost beyond numpy's work. numpy's per-call overhead is included: an upper bound.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_dump import MissingJax, make_dump

from workbench.facts import FACTS
from workbench.hlo_ir import HloModule
from workbench.index import scan
from workbench.model import Dump, Module
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.bisect import Mark, bisect_replay, evaluation_bound, run_bisect
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.steps import Replay


def add_module_arguments(parser: argparse.ArgumentParser) -> None:
    """`--dump`, `--layers`, `--module`: which module of which dump a benchmark measures."""
    parser.add_argument("--dump", type=Path, help="an XLA dump (default: the large dump)")
    parser.add_argument("--layers", type=int, default=4,
                        help="transformer layers of the generated dump (default 4)")
    parser.add_argument("--module", help="module key (default: the largest with an execution)")


def module_of(args: argparse.Namespace, program: str) -> tuple[Path, Dump, Module]:
    """The dump `--dump` names (else the generated large dump) and its `--module` (else its
    largest); without JAX to generate the dump, exit 3 saying so."""
    try:
        folder = args.dump or make_dump(args.layers)
    except MissingJax as error:
        print(f"{program}: {error}", file=sys.stderr)
        raise SystemExit(3) from error
    dump = scan(folder)
    return folder, dump, dump.find_module(args.module) if args.module else largest_module(dump)


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


@dataclass
class InstructionTiming:
    seconds: float
    elements: int  # the most elements among its operands and result
    leaf: bool  # no other instruction ran inside it (not a fusion, call, loop...)
    depth: int


def _elements(value: object) -> int:
    if isinstance(value, tuple):
        return max((_elements(v) for v in value), default=0)
    return int(getattr(value, "size", 1))


def time_instructions(hlo: HloModule, arguments: list) -> tuple[list[InstructionTiming], float]:
    """Time every executed instruction, then the evaluator with no work to do.

    Returns the timing of each instruction of one evaluation (the handlers the evaluator's
    plans look up, `interpreter.handler_for`, are wrapped; nested ones such as fused
    computations included) and the seconds per instruction of a second evaluation in which
    each handler returns the value recorded in the first: the interpreter's own cost (plans,
    dispatch, argument checks) with numpy doing nothing.
    """
    from workbench.replay.hlo import evaluate_module, interpreter

    original = interpreter.handler_for
    timings: list[InstructionTiming] = []
    recorded: dict[tuple[int, int], object] = {}
    calls: dict[int, int] = {}
    stack: list[list[bool]] = []  # per open handler: did another one run inside it?

    def timed_handler_for(opcode: str):  # type: ignore[no-untyped-def]  # the registry's handler type, untyped here
        handler = original(opcode)

        def timed(interp, instruction, operands):  # type: ignore[no-untyped-def]  # the registry's handler type, untyped here
            if stack:
                stack[-1][0] = True
            stack.append([False])
            begin = time.perf_counter()
            try:
                value = handler(interp, instruction, operands)
            finally:
                elapsed = time.perf_counter() - begin
                nested = stack.pop()[0]
            size = max([_elements(value), *(_elements(o) for o in operands)])
            timings.append(InstructionTiming(elapsed, size, not nested, len(stack)))
            count = calls.get(id(instruction), 0)
            calls[id(instruction)] = count + 1
            recorded[(id(instruction), count)] = value
            return value

        return timed

    def replaying_handler_for(opcode: str):  # type: ignore[no-untyped-def]  # the registry's handler type, untyped here
        def replayed(interp, instruction, operands):  # type: ignore[no-untyped-def]  # the registry's handler type, untyped here
            count = calls.get(id(instruction), 0)
            calls[id(instruction)] = count + 1
            return recorded[(id(instruction), count)]

        return replayed

    try:
        interpreter.handler_for = timed_handler_for  # type: ignore[assignment]  # timed in place of the registry's
        evaluate_module(hlo, arguments)
        interpreter.handler_for = replaying_handler_for  # type: ignore[assignment]  # timed in place of the registry's
        idle = math.inf
        for _run in range(5):  # CPU time, best of 5: this part is pure Python, one thread
            calls.clear()
            begin = time.process_time()
            evaluate_module(hlo, arguments)
            idle = min(idle, time.process_time() - begin)
        replayed = sum(calls.values())
    finally:
        interpreter.handler_for = original  # type: ignore[assignment]  # the registry's own, put back
    return timings, idle / max(1, replayed)


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
    print(f"module: {module.key} ({module.name}): {len(steps)} HLO steps, execution "
          f"{execution.id}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          f"(timings are wall clock: a busy machine inflates them)")

    # Per step: loading vs evaluating, on a sample spread over the timeline.
    count = min(args.samples, len(steps))
    sample = sorted({round(i * (len(steps) - 1) / max(1, count - 1)) for i in range(count)})
    load_times, eval_times, cpu_times = [], [], []
    from workbench.replay.hlo import evaluate_module

    FACTS.clear()  # cold: every step is read from disk, as a bisection meets it
    for position in sample:
        step = steps[position]
        begin = time.perf_counter()
        hlo = backend.load(step)
        loaded = time.perf_counter()
        cpu = time.process_time()
        evaluate_module(hlo, inputs.arguments)
        cpu = time.process_time() - cpu
        done = time.perf_counter()
        load_times.append(loaded - begin)
        eval_times.append(done - loaded)
        cpu_times.append(cpu)
        print(f"  step {step.index:3d} {step.label:<45} {hlo.instruction_count():6d} instr  "
              f"load {loaded - begin:6.3f} s  evaluate {done - loaded:6.3f} s "
              f"(CPU {cpu:6.3f} s)")
    per_step = statistics.mean(load_times) + statistics.mean(eval_times)
    print(f"per step: load {statistics.mean(load_times):.3f} s + evaluate "
          f"{statistics.mean(eval_times):.3f} s = {per_step:.3f} s (mean of {len(sample)}; "
          f"evaluation CPU time {statistics.mean(cpu_times):.3f} s)")

    # Bisection, from a cold loader cache, as a fresh run meets it.
    FACTS.clear()
    begin = time.perf_counter()
    with Replay(backend, inputs) as replay:
        verdict = bisect_replay(replay)
    bisect_seconds = time.perf_counter() - begin
    linear_estimate = per_step * len(steps)
    print(f"bisection: {bisect_seconds:.2f} s, {verdict.evaluations} evaluations (bound "
          f"{evaluation_bound(len(steps))}), status {verdict.status}: {verdict.detail}")
    # The dump is healthy, so that bisection stops after the reference and the last step.
    # One that has to find a culprit: the evaluations are real, the verdicts planted (every
    # step from the middle on counts as failing).
    planted = len(steps) // 2 + 1

    def judge(position: int) -> Mark:
        replay.evaluate(position)
        return "good" if position < planted else "bad"

    FACTS.clear()
    begin = time.perf_counter()
    with Replay(backend, inputs) as replay:
        found = run_bisect(len(steps), judge)
    hunt_seconds = time.perf_counter() - begin
    print(f"bisection finding a culprit (planted at position {planted}): {hunt_seconds:.2f} s, "
          f"{found.evaluations} evaluations, culprit position {found.culprit}; a linear replay "
          f"of all {len(steps)} steps takes about {linear_estimate:.1f} s: ratio "
          f"{hunt_seconds / linear_estimate:.2f}")

    # Overhead per instruction, on the reference step: what an instruction costs when numpy
    # has (almost) nothing to do, plus the interpreter's dispatch between handlers.
    hlo = backend.load(steps[0])
    print(f"reference step: {hlo.instruction_count()} instructions")
    begin = time.perf_counter()
    evaluate_module(hlo, inputs.arguments)
    plain = time.perf_counter() - begin
    timings, dispatch = time_instructions(hlo, inputs.arguments)
    small = sorted(t.seconds for t in timings if t.leaf and t.elements <= 16)
    large = sum(t.seconds for t in timings if t.leaf and t.elements > 16)
    leaves = sum(t.seconds for t in timings if t.leaf)
    median = small[len(small) // 2] if small else 0.0
    p90 = small[int(len(small) * 0.9)] if small else 0.0
    print(f"overhead: reference step evaluates in {plain:.3f} s, {len(timings)} instructions "
          f"executed; interpreter alone (handlers return recorded values; CPU time, best of "
          f"5): {dispatch * 1e6:.1f} us per instruction; an instruction on <= 16 elements "
          f"({len(small)} of them): {median * 1e6:.1f} us (median; p90 {p90 * 1e6:.1f} us); "
          f"beyond numpy's work: {(dispatch + median) * 1e6:.1f} us per instruction "
          f"(target: well under 50 us)")
    print(f"  leaf instructions on > 16 elements take {large:.3f} s of the {leaves:.3f} s "
          f"spent in leaf instructions")

    if args.triage:
        from workbench.replay.triage.run import triage

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

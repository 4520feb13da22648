"""Localization time and memory on the largest module, against one evaluation of it.

    python benchmarks/localize_bench.py [--dump DIR | --layers 4] [--module KEY] [--repeat 3]
        [--pair A B [--as-dumped]] [--memory-limit SIZE]

On the largest module of the large transformer dump (made or reused as `replay_large.py`
does; `--dump` for another), first execution, the pair of steps around the middle of the
timeline is localized in the same run as the baseline (one plain evaluation of the later
step), each case best of `--repeat`, the runs interleaved (one of each in turn) so that load
from other work spreads over all of them; wall time, and the process's CPU time (which does not
count waiting for a core on a shared machine):

- early, middle, late: the later step with one instruction's opcode changed (the first, the
  middle or the last float array `add` of the entry computation turned into `subtract`): the
  bug is found, which needs the truth of the culprit's region and of its consumer's (the
  changed opcode makes it a candidate rewrite, see `localize._Search`); both steps'
  evaluations stop at the culprit, so an early bug costs less than a late one;
- clean: the pair as dumped: the earlier step whole, the later step where it is not settled,
  and the matching; nothing beyond the tolerance.

The interleaved runs never localize the same pair twice in a row, so each pays the matching
(and what is worked out per site); the late case is then also timed run after run (as triage
does for each execution of a module), when those of the same two modules are reused.

At model size (issue 21): `--pair A B` localizes between the steps at timeline indices A and
B (the culprit pass's, e.g. of a dump with a bug planted by `tests/helpers/planting.py`), and
`--as-dumped` measures that pair alone, unplanted: with `--dump` the GPT-style AdamW training
step of `benchmarks/gpt_adamw_step.py` (8 layers: about 8,000 instructions mid-pipeline). The
process's peak RSS is printed against the memory limit (`--memory-limit`, else the default).

The goal: localization within 3 evaluations' time. Peak memory: the bytes of intermediate
values localization holds at once (its own count, bounded with what its evaluations hold by
`--memory-limit`), and the peak of traced allocations during a localization (tracemalloc, a
separate untimed run).
"""

from __future__ import annotations

import os

# One BLAS thread (unless set): on a shared machine a multi-threaded BLAS makes the 20 ms
# baseline itself vary fourfold; both sides of the ratio run alike. Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import resource
import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_large import add_module_arguments, module_of
from timing import interleaved_best

from workbench.hlo_ir import HloModule
from workbench.loader import load_step_hlo
from workbench.replay.backends import open_backend
from workbench.replay.hlo import evaluate_module
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.localize.localizer import Localizer
from workbench.replay.processes import memory
from workbench.sizes import format_size, parse_size


def plant(module: HloModule, where: float = 0.0) -> tuple[HloModule, str]:
    """`module` with one float array `add` of the entry computation made a `subtract`: the
    first (`where` 0), the last (1), or the one at that fraction of them."""
    entry = module.entry
    found = [p for p, i in enumerate(entry.instructions)
             if i.opcode == "add" and i.shape.dims and i.shape.element_type.startswith("f")]
    if not found:
        raise SystemExit("no float add in the entry computation to plant a bug in")
    position = found[round(where * (len(found) - 1))]
    instructions = list(entry.instructions)
    instructions[position] = replace(instructions[position], opcode="subtract")
    computations = [replace(c, instructions=instructions) if c is entry else c
                    for c in module.computations]
    return replace(module, computations=computations), entry.instructions[position].name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_module_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pair", nargs=2, type=int, metavar=("A", "B"),
                        help="the steps to localize between (timeline indices; default the "
                        "middle two)")
    parser.add_argument("--as-dumped", action="store_true",
                        help="only the pair as dumped (no bug planted by this script)")
    parser.add_argument("--memory-limit", type=parse_size, metavar="SIZE")
    args = parser.parse_args()
    if args.memory_limit is not None:
        memory.set_memory_limit(args.memory_limit)
    folder, dump, module = module_of(args, "localize_bench")
    backend = open_backend(dump.root, module)
    inputs = resolve_inputs(backend, module.executions[0], InputSpec())
    steps = backend.steps()
    if args.pair:
        by_index = {step.index: step for step in steps}
        before_step, after_step = by_index[args.pair[0]], by_index[args.pair[1]]
    else:
        middle = len(steps) // 2
        before_step, after_step = steps[middle - 1], steps[middle]
    before = load_step_hlo(dump.root, before_step)
    after = load_step_hlo(dump.root, after_step)
    if args.as_dumped:
        cases = {"dumped": (after, "")}
    else:
        cases = {"early": plant(after, 0.0), "middle": plant(after, 0.5),
                 "late": plant(after, 1.0), "clean": (after, "")}
    arguments = inputs.arguments
    print(f"{folder}: {module.key} ({module.name}), steps {before_step.index} -> "
          f"{after_step.index} ({after_step.pass_name}), {after.instruction_count()} "
          "instructions; planted add -> subtract: "
          + ", ".join(f"{name} ({case})" for case, (_, name) in cases.items() if name))

    runs: dict[str, Callable[[], object]] = {
        "evaluation": lambda: evaluate_module(after, arguments)}
    for case, (later, _) in cases.items():
        runs[case] = (lambda m=later: Localizer(before, m, arguments).run(before_step,
                                                                          after_step))
    best = interleaved_best(args.repeat, runs)
    evaluation, evaluation_cpu = best["evaluation"]
    print(f"one evaluation: {evaluation:.3f} s (CPU {evaluation_cpu:.3f} s)")
    worst = 0.0
    for case, (later, _) in cases.items():
        result = Localizer(before, later, arguments).run(before_step, after_step)
        seconds, cpu = best[case]
        tracemalloc.start()
        Localizer(before, later, arguments).run(before_step, after_step)
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        found = (f"{result.instruction.name} ({result.instruction.opcode})"
                 if result.instruction else "none")
        ratio = seconds / evaluation
        worst = max(worst, ratio)
        print(f"{case:>6}: {seconds:.3f} s = {ratio:.2f} evaluations (CPU "
              f"{cpu / evaluation_cpu:.2f}; {result.evaluations} evaluations run, culprit "
              f"{found}, {result.matched} matched, {len(result.unmatched)} unmatched); values "
              f"kept at most {result.kept_bytes / 2**20:.1f} MB (spilled "
              f"{result.spilled_bytes / 2**20:.1f} MB), traced peak {traced / 2**20:.1f} MB")
    if "late" in cases:
        late = cases["late"][0]
        again, _ = interleaved_best(args.repeat, {"again": lambda: Localizer(
            before, late, arguments).run(before_step, after_step)})["again"]
        print(f"  late, the same pair again (another execution: the matching is reused): "
              f"{again:.3f} s = {again / evaluation:.2f} evaluations")
    print(f"worst: {worst:.2f} evaluations' time (goal: at most 3)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    limit = memory.memory_limit()
    print(f"process peak RSS {format_size(peak)} = {peak / limit:.2f}x the memory limit of "
          f"{format_size(limit)} (the modules, the inputs and every run above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

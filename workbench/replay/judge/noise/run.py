"""The noise stage's driver: the random samples and the split sample of each group of what
the split sample reads, merged into one `Noise`. The samples may run in shares, each in its
own process (`sampled`, merged by `Sampled.merged`): the plan they share is `noise_plan`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, LiteralValue, Shape
from workbench.replay.judge.noise.budget import (
    check_stage_memory,
    deciders,
    needed_clusters,
    packed_groups,
    spilled,
    split_sample_budget,
)
from workbench.replay.judge.noise.model import SAMPLES, Discontinuity, Noise, StageProgress
from workbench.replay.judge.noise.noisy_interpreter import NoisyInterpreter
from workbench.replay.judge.noise.recorder import Recorder
from workbench.replay.judge.noise.result_range import ResultRange
from workbench.replay.judge.noise.split_sample import (
    may_move,
    non_negative,
    split_candidates,
    steep_ancestors,
)


@dataclass
class NoisePlan:
    """What every part of the stage is made from alike, wherever it runs (`noise_plan`): the
    f64 shadow, the declared instructions and result shape, the steep ops' sign-following
    ancestors, the groups the split sample's values are kept in (`packed_groups`, within
    `budget` bytes; or one group, with what passes the budget on disk: `spilled`), and the
    most bytes the stage holds (`check_stage_memory`)."""

    shadow: HloModule
    declared: dict[tuple[str, str], Instruction]
    result: Shape
    ancestors: dict[tuple[str, str], list[tuple[str, str]]]
    budget: int
    groups: list[set[tuple[str, str]]]
    deciders: frozenset[tuple[str, str]]  # of them, those whose ranges are kept in f32
    on_disk: frozenset[tuple[str, str]]  # and those whose ranges are kept on disk
    spreads: int  # the most bytes of accumulation spreads kept (`spreads_budget`)
    holds: int
    range_on_disk: bool  # the samples' range of the result kept on disk


def noise_plan(module: HloModule, arguments: Sequence[LiteralValue],
               limit: int | None = None, spill: bool = True) -> NoisePlan:
    """The stage's plan for `module` on widened `arguments` under the memory limit `limit`
    (the one in force by default), its range of the result kept on disk where only that fits
    (in a folder a parent process maps it from, within `memory.shared_disk_arrays`), and,
    if `spill`, what the split sample reads beyond its budget kept on disk where the disk has
    room (one group, not several: `spilled`); raises `OverMemoryLimit` when the stage would
    not fit, before any sample runs."""
    from workbench.replay.hlo.shadow import narrow_arguments, narrowed_module

    shadow = narrowed_module(module, narrow_arguments(module, arguments))
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = steep_ancestors(declared, non_negative(module, arguments))
    budget = split_sample_budget(limit)
    coarse = deciders(declared, ancestors)
    groups = packed_groups(needed_clusters(declared, ancestors), declared, budget, coarse)
    result = module.entry.root.shape
    on_disk: frozenset[tuple[str, str]] = frozenset()
    if spill:
        groups, on_disk = spilled(groups, declared, result, budget, coarse)
    in_memory = [group - on_disk for group in groups]
    memory = check_stage_memory(shadow, result, in_memory, declared, budget, limit, coarse)
    return NoisePlan(shadow, declared, result, ancestors, budget, groups, coarse, on_disk,
                     memory.spreads, memory.holds, memory.range_on_disk)


def noise_of(module: HloModule, arguments: Sequence[LiteralValue], samples: int = SAMPLES,
             tell: StageProgress | None = None) -> Noise:
    """The reference `module` evaluated `samples` times in f64 with random rounding at each
    op's declared precision, on `arguments` widened to the shadow's types or in their declared
    types (float arrays then widened where each instruction reads them: `hlo/shadow.py`).

    What the split sample reads (`needed_clusters`) is kept within `NEEDED_SHARE` of the
    memory limit: when it would not fit (sized from the declared shapes), it is split into groups
    that do, each group's values kept while the samples run again for it and its own split
    sample moves them. The random samples are the same each time (fixed seeds); the ranges
    are their union with every group's split sample. Shares of the samples may run elsewhere
    (`sampled`, one worker's share; `Sampled.merged`): this is the stage in one process,
    telling `tell` each evaluation as it starts."""
    plan = noise_plan(module, arguments)
    counter = None if tell is None else _Counter(tell, len(plan.groups), samples)
    return noise_from(plan, arguments, (sampled(plan, arguments, group, range(samples), counter)
                                        for group in range(len(plan.groups))), counter)


@dataclass
class _Counter:
    """Tells `tell` each evaluation of a stage in one process as it starts: which it is, and
    how many at most follow (each group's samples, its split sample and its domain sample,
    which runs only where some value lies within its noise of zero)."""

    tell: StageProgress
    groups: int
    samples: int
    done: int = 0

    def starts(self, group: int, what: str) -> None:
        self.done += 1
        where = f", group {group + 1} of {self.groups}" if self.groups > 1 else ""
        self.tell(what + where, self.groups * (self.samples + 2) - self.done)

    def skipped(self) -> None:
        """A domain sample that did not run: one evaluation fewer to come."""
        self.done += 1


def noise_from(plan: NoisePlan, arguments: Sequence[LiteralValue],
               parts: Iterable[Sampled], counter: _Counter | None = None) -> Noise:
    """The noise from each group's samples (`parts`, each over every sample; taken one at a
    time, so only one group's ranges are held): each group's split sample, then the groups
    merged. The random samples are the same in every group (fixed seeds), so the range of the
    result is the first group's, which each group's split and domain samples widen: one range
    is held, not one per group."""
    from workbench.sizes import format_size

    found: _Found | None = None
    result: ResultRange | None = None
    left_out = 0
    for part in parts:
        result = result or part.result
        assert result is not None, "the first group's samples keep the range of the result"
        group = _split(plan, arguments, part, result, counter)
        found = group if found is None else found.merged(group)
        left_out += part.left_out
    assert found is not None and result is not None
    message = None
    if left_out:
        message = (f"the split sample did not cover {left_out} value(s) beyond its memory "
                   f"budget ({format_size(plan.budget)}, a quarter of the memory limit; raise "
                   "it with --memory-limit)")
    return Noise(result.low, result.high, found.discontinuities(plan.declared),
                 result.nan_seen, message)


@dataclass
class _Found:
    """What the samples of one group found, merged over groups by `merged`."""

    flips: dict[tuple[str, str], int]
    nan_flips: dict[tuple[str, str], int]
    jumps: dict[tuple[str, str], int]
    instructions: dict[tuple[str, str], Instruction]

    def merged(self, other: _Found) -> _Found:
        def most(a: dict[tuple[str, str], int], b: dict[tuple[str, str], int]
                 ) -> dict[tuple[str, str], int]:
            return {key: max(a.get(key, 0), b.get(key, 0)) for key in {**a, **b}}

        return _Found(most(self.flips, other.flips), most(self.nan_flips, other.nan_flips),
                      most(self.jumps, other.jumps), {**other.instructions, **self.instructions})

    def discontinuities(self, declared: dict[tuple[str, str], Instruction]
                        ) -> tuple[Discontinuity, ...]:
        """Flips (most elements first), domain boundaries crossed, then the first jumps."""
        found = [_discontinuity(declared[key], key[0], count, flipped=True)
                 for key, count in sorted(self.flips.items(), key=lambda item: -item[1])]
        for key, count in self.nan_flips.items():
            instruction = self.instructions[key]
            if not any((key[0], operand) in self.nan_flips for operand in instruction.operands):
                found.append(_discontinuity(instruction, key[0], count, flipped=True))
        for key, count in sorted(self.jumps.items(), key=lambda item: -item[1]):
            instruction = self.instructions[key]
            if any((key[0], operand) in self.jumps for operand in instruction.operands):
                continue  # downstream of a jump: the jump is named, not what follows it
            found.append(_discontinuity(instruction, key[0], count, flipped=False))
        return tuple(found)


@dataclass
class Sampled:
    """What some random samples of one group found (`sampled`): the range of the result
    (with where it was NaN; kept by the first group only), each tracked value's range, the
    flips and domain boundaries crossed (most elements each, with when a serial run would
    first see it: `found_at`), and how many values the split sample would read were not
    kept. Every share of the samples starts with sample 0, which the others are compared
    with, so shares merge (`merged`) into exactly what one run of all the samples finds, in
    any order."""

    group: int
    result: ResultRange | None
    ranges: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]
    differing: dict[tuple[str, str], int]
    nan_flips: dict[tuple[str, str], int]
    found_at: dict[tuple[str, str], tuple[int, int]]
    instructions: dict[tuple[str, str], Instruction]
    left_out: int

    def merged(self, other: Sampled) -> Sampled:
        """This share with `other`'s (of the same group) added, in place: minima, maxima and
        counts are the same whatever order the shares arrive in."""
        if self.result is not None and other.result is not None:
            self.result.merge(other.result)
        for value, (low, high) in other.ranges.items():
            known = self.ranges.get(value)
            if known is None:
                self.ranges[value] = (low, high)
            else:
                np.fmin(known[0], low, out=known[0])
                np.fmax(known[1], high, out=known[1])
        for counts, more in ((self.differing, other.differing),
                             (self.nan_flips, other.nan_flips)):
            for key, count in more.items():
                counts[key] = max(counts.get(key, 0), count)
        for key, when in other.found_at.items():
            self.found_at[key] = min(self.found_at.get(key, when), when)
        for key, instruction in other.instructions.items():
            self.instructions.setdefault(key, instruction)
        self.left_out = max(self.left_out, other.left_out)
        return self


def sampled(plan: NoisePlan, arguments: Sequence[LiteralValue], group: int,
            samples: Iterable[int], counter: _Counter | None = None) -> Sampled:
    """Random samples `samples` (sample 0 first, whether asked or not: the others are
    compared with it) of the plan's `group`, on widened `arguments`. Only the first group's
    keep the range of the result: the later groups' samples are the same (`noise_from`), so
    they hand each output over to be dropped."""
    from workbench.replay.hlo import evaluate_module

    recorder = Recorder(needed=plan.groups[group], needed_bytes=plan.budget,
                        deciders=plan.deciders, on_disk=plan.on_disk)
    result = ResultRange(plan.result, plan.range_on_disk) if group == 0 else None
    interpreter = NoisyInterpreter(plan.shadow, plan.declared, recorder,
                                   _dropped if result is None else result.add_output,
                                   plan.spreads)
    for sample in (0, *sorted(set(samples) - {0})):
        if counter is not None:
            counter.starts(group, f"sample {sample + 1} of {counter.samples}")
        interpreter.reseed(sample)
        value = evaluate_module(plan.shadow, arguments, interpreter=interpreter)
        if result is not None:
            result.add(value)
        del value
    part = Sampled(group, result, dict(recorder.ranges), dict(recorder.differing),
                   dict(recorder.nan_flips), dict(recorder.found_at),
                   dict(recorder.instructions), recorder.left_out)
    interpreter.release()
    return part


def _dropped(index: int, value: object) -> None:
    """Where a later group's samples hand each output: its range is the first group's."""


def _split(plan: NoisePlan, arguments: Sequence[LiteralValue], part: Sampled,
           result: ResultRange, counter: _Counter | None = None) -> _Found:
    """The split sample of `part`'s group, on its samples' ranges (`part` over every
    sample), then the domain sample where some value an op's domain depends on is within its
    noise of 0, and what the group found with them; both widen `result`, the range of the
    result."""
    from workbench.replay.hlo import evaluate_module

    def in_serial_order(counts: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        return dict(sorted(counts.items(), key=lambda item: part.found_at[item[0]]))

    recorder = Recorder(ranges=part.ranges, instructions=part.instructions, sample=SAMPLES,
                        needed=plan.groups[part.group], needed_bytes=plan.budget,
                        deciders=plan.deciders)
    # Its NaNs are not legal ones: it crosses each threshold alone, so where it answers a
    # compare the other way without moving the operand (`where(x > 0, sqrt(x), 0)`), or moves
    # a value the program keeps non-negative, it computes what no rounding can. Its finite
    # values widen the range; a NaN leaves it as the random samples made it.
    interpreter = NoisyInterpreter(plan.shadow, plan.declared, recorder,
                                   partial(result.add_output, nans_legal=False))
    split = interpreter.start_split(split_candidates(plan.declared, recorder, plan.ancestors))
    if counter is not None:
        counter.starts(part.group, "split sample")
    result.add(evaluate_module(plan.shadow, arguments, interpreter=interpreter),
               nans_legal=False)
    flips = in_serial_order(part.differing)  # flipped between samples, or in the split sample
    for key, count in split.elements_moved.items():
        flips[key] = max(flips.get(key, 0), count)
    domain = split_candidates(plan.declared, recorder, plan.ancestors, domain=True)
    if not may_move(domain, recorder):
        if counter is not None:
            counter.skipped()
    else:
        if counter is not None:
            counter.starts(part.group, "domain sample")
        boundary = interpreter.start_split(domain, thresholds=False)
        # Its NaNs are legal: it moves each value across zero where a sum makes it, within its
        # noise, and crosses no other threshold, so all it computes follows from one legal
        # rounding of each value (sqrt of a second moment that rounding may leave negative).
        interpreter.output_sink = result.add_output
        result.add(evaluate_module(plan.shadow, arguments, interpreter=interpreter))
        for key, count in boundary.elements_moved.items():
            flips[key] = max(flips.get(key, 0), count)
    found = _Found(flips, in_serial_order(part.nan_flips),
                   recorder.jumps(), part.instructions)
    interpreter.release()
    return found


def _discontinuity(
    instruction: Instruction, computation: str, elements: int, flipped: bool
) -> Discontinuity:
    op_name = instruction.metadata.op_name if instruction.metadata else ""
    return Discontinuity(
        instruction.name, instruction.opcode, computation, op_name, elements, flipped
    )

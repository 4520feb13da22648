"""The noise stage within the memory limit: what its values' ranges cost, sized from the
declared shapes before any sample runs; the stage refused when it cannot fit; what the split
sample reads beyond its share of the limit kept on disk, or, where the disk has no room, cut
into groups that fit it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, Shape
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.registry import Value
from workbench.replay.judge.noise.op_kinds import (
    EXACT,
    F32_EPS,
    FLOAT_TYPES,
    STEEP_AT_ZERO,
    STEPS,
    converts_exactly,
    eps_of,
    has_discrete,
    is_float,
)
from workbench.replay.judge.noise.result_range import result_bytes

# Most bytes kept only to name flips and jumps: integer values, and the ranges of values
# declared at most f32 wide in f32 (a jump is a quarter of the array's magnitude).
TRACKED_BYTES = 128 * 2**20
# Most bytes kept in all, what the split sample reads included: this share of the memory
# limit in force (`--memory-limit`; a quarter of the machine's memory by default).
NEEDED_SHARE = 0.25
RANGE_BYTES = 17  # what a value's range keeps per element: low and high in f64, a NaN mask
# What the range of a value read only to tell where a steep op is decided keeps per element
# (`deciders`): low and high in f32, rounded outward, and the NaN mask.
DECIDER_BYTES = 9
# Most bytes of accumulation spreads kept for later samples (`spreads_budget`): this share of
# the memory limit, at most what the program's narrow dots make, and of it what the rest of
# the stage leaves room for, though never less than `SPREAD_FLOOR`. A spread not kept is
# estimated again in each sample, which costs about as much as its dot did in f64.
SPREAD_SHARE = 0.125
SPREAD_FLOOR = 128 * 2**20
# Left free on the disk beside the ranges kept there (`spilled`).
DISK_SPARE = 2**30


def split_sample_budget(limit: int | None = None) -> int:
    """The most bytes the values' ranges may take, what the split sample reads included:
    `NEEDED_SHARE` of the memory limit `limit` (by default the one in force)."""
    from workbench.sizes import memory_limit

    return int(NEEDED_SHARE * (memory_limit() if limit is None else limit))


def spreads_budget(declared: dict[tuple[str, str], Instruction], others: int,
                   limit: int | None = None) -> int:
    """The most bytes of accumulation spreads the stage keeps (f32, one per element of each
    dot declared narrower than f32, `noisy_interpreter._accumulating`), beside the `others`
    bytes the rest of the stage holds: `SPREAD_SHARE` of the memory limit `limit` (by default
    the one in force), at most what the declared dots make (a loop's dots, made again each
    trip, count once: beyond, they are estimated again), and at most the room the rest
    leaves, but `SPREAD_FLOOR` even without room (so a stage that fit with it fits still)."""
    from workbench.sizes import memory_limit

    limit = memory_limit() if limit is None else limit
    made = sum(4 * int(np.prod(instruction.shape.dims, dtype=np.int64))
               for instruction in declared.values()
               if instruction.opcode == "dot" and is_float(instruction)
               and instruction.shape.is_array
               and eps_of(instruction.shape.element_type) > F32_EPS)
    return min(made, int(SPREAD_SHARE * limit), max(limit - others, SPREAD_FLOOR))


@dataclass(frozen=True)
class StageMemory:
    """What the noise stage will hold (`check_stage_memory`)."""

    holds: int  # the most bytes at once, in memory
    spreads: int  # of them, the narrow dots' accumulation spreads kept (`spreads_budget`)
    range_on_disk: bool  # the samples' range of the result kept on disk (`ResultRange`)


def check_stage_memory(shadow: HloModule, result: Shape, groups: list[set[tuple[str, str]]],
                       declared: dict[tuple[str, str], Instruction], budget: int,
                       limit: int | None = None,
                       deciders: frozenset[tuple[str, str]] = frozenset()) -> StageMemory:
    """The most bytes the stage holds at once, from declared shapes, before any sample runs:
    one evaluation of the f64 shadow (each output handed to the range as it is made), the
    samples' range of its result (of the declared shape `result`: `result_bytes`), the
    values' ranges the recorder keeps (for the split sample, its largest group within
    `budget`, and to name jumps, `TRACKED_BYTES`: at most every value's), and the
    accumulation spreads (`spreads_budget`). Where the stage fits only with the range of the
    result out of memory, that range is kept on disk (a file
    the system writes back and drops: a training step's result is as large as its parameters
    and optimizer state), and not counted.
    Raises `OverMemoryLimit` saying so when the stage passes the memory limit all the same,
    so a run that cannot fit stops before its most expensive stage, not by running out
    (beyond `limit`, by default the one in force)."""
    from workbench.replay.processes import memory
    from workbench.sizes import format_size, memory_limit

    evaluation = Interpreter(shadow, output_sink=_dropped).holds_at_once(
        shadow.entry_name)  # raises beyond it
    kept_result = result_bytes(result)
    split = min(budget, max((group_bytes(group, declared, deciders) for group in groups),
                            default=0))
    # At most every value's range: a small program keeps far less than the caps.
    kept = min(split + TRACKED_BYTES, group_bytes(set(declared), declared, deciders))
    room = memory_limit() if limit is None else limit
    in_memory = evaluation + kept_result + kept
    spreads = spreads_budget(declared, in_memory, limit)
    on_disk = False
    if in_memory + spreads > room:  # on disk, where only that fits
        spared = spreads_budget(declared, in_memory - kept_result, limit)
        if in_memory - kept_result + spared <= room:
            on_disk, in_memory, spreads = True, in_memory - kept_result, spared
    needed = in_memory + spreads
    dots = f", the narrow dots' spreads {format_size(spreads)}" if spreads else ""
    where = " kept on disk" if on_disk else ""
    memory.check(needed, (
        f"the random-rounding stage (one f64 evaluation holds {format_size(evaluation)}, the "
        f"samples' range of the result {format_size(kept_result)}{where}, the values' ranges "
        f"{format_size(kept)}{dots})"), limit)
    return StageMemory(needed, spreads, on_disk)


def _dropped(index: int, value: Value) -> None:
    """What `check_stage_memory`'s interpreter hands each output to: it runs nothing."""


def _range_bytes(shape: Shape, each: int = RANGE_BYTES) -> int:
    """What the samples' range of a value of `shape` keeps: `each` bytes a float element."""
    if shape.is_tuple:
        return sum(_range_bytes(part, each) for part in shape.tuple_shapes)
    if not shape.is_array or shape.element_type not in FLOAT_TYPES:
        return 0
    return each * int(np.prod(shape.dims, dtype=np.int64))


def group_bytes(group: set[tuple[str, str]], declared: dict[tuple[str, str], Instruction],
                deciders: frozenset[tuple[str, str]] = frozenset()) -> int:
    """What the recorder keeps of the ranges of the values in `group`."""
    return sum(_kept_bytes(key, declared, deciders) for key in group)


def _kept_bytes(key: tuple[str, str], declared: dict[tuple[str, str], Instruction],
                deciders: frozenset[tuple[str, str]] = frozenset()) -> int:
    """What the recorder keeps of the value `key`'s samples' range: nothing for a value no op
    rounds (moved or copied, `EXACT`; converted from an integer or a pred), which the
    samples never record (`noisy_interpreter`): the optimizer state a training step reads,
    the constants it broadcasts. A decider's range is kept in f32 (`deciders`)."""
    instruction = declared.get(key)
    if instruction is None or instruction.opcode in EXACT:
        return 0
    if instruction.opcode == "convert" and \
            converts_exactly(declared.get((key[0], instruction.operands[0]))):
        return 0
    return _range_bytes(instruction.shape, DECIDER_BYTES if key in deciders else RANGE_BYTES)


def spilled(groups: list[set[tuple[str, str]]], declared: dict[tuple[str, str], Instruction],
            result: Shape, budget: int, deciders: frozenset[tuple[str, str]] = frozenset()
            ) -> tuple[list[set[tuple[str, str]]], frozenset[tuple[str, str]]]:
    """The groups as one, with the values that pass `budget` (`TRACKED_BYTES` kept besides)
    kept on disk (the second part; the largest stay in memory while they fit), when they do
    not all fit and the disk has room for the rest and the range of the result (`result`)
    with `DISK_SPARE` to spare; else the groups as they are, and nothing on disk.

    Each group past the first runs every sample again: 12 evaluations of the whole step, each
    making every value. On disk, the samples write each spilled range back once a sample,
    a fraction of those values' bytes (a GPT-2 step: 7.8 GB a sample, about 14 s on a disk
    that writes 0.5 GB/s, against 15 s for one evaluation and 3 minutes for a group). A
    cluster larger than the budget is then kept whole, not left out in part."""
    from workbench.replay.processes.memory import disk_room

    room = max(budget - TRACKED_BYTES, 0)
    every: set[tuple[str, str]] = set().union(*groups)
    sizes = {key: _kept_bytes(key, declared, deciders) for key in every}
    if sum(sizes.values()) <= room:
        return groups, frozenset()
    in_memory, used = set(), 0
    for key in sorted(every, key=lambda key: (-sizes[key], key)):
        if used + sizes[key] <= room:
            in_memory.add(key)
            used += sizes[key]
    on_disk = every - in_memory
    if disk_room() < sum(sizes[key] for key in on_disk) + result_bytes(result) + DISK_SPARE:
        return groups, frozenset()
    return [every], frozenset(on_disk)


def _threshold_clusters(declared: dict[tuple[str, str], Instruction]
                        ) -> list[set[tuple[str, str]]]:
    """Each compare, step, integer convert, sort, top-k or argmax with its operands: what
    the split sample answers from a threshold's other side, reading the operands' ranges."""
    return [{(computation, name) for name in (instruction.name, *instruction.operands)}
            for (computation, _), instruction in declared.items()
            if instruction.opcode in STEPS | {"compare"} or (
                instruction.opcode in ("convert", "reduce", "sort", "topk")
                and has_discrete(instruction))]


def deciders(declared: dict[tuple[str, str], Instruction],
             ancestors: dict[tuple[str, str], list[tuple[str, str]]]
             ) -> frozenset[tuple[str, str]]:
    """The steep ops whose samples' range only tells where each is decided
    (`split_sample.split_candidates`: far from zero beyond `REACH` half ranges), not what
    the split sample moves or compares: kept in f32, rounded outward. That widens a range
    by an f32 ulp of its ends, which turns an element undecided only where its samples
    already straddle a quarter of its magnitude: an f64 range would be twice the bytes
    (a GPT-2 step's AdamW updates: 3 GB)."""
    read = set(ancestors).union(*_threshold_clusters(declared))
    return frozenset(op for ops in ancestors.values() for op in ops
                     if declared[op].opcode in STEEP_AT_ZERO and op not in read)


def needed_clusters(declared: dict[tuple[str, str], Instruction],
                    ancestors: dict[tuple[str, str], list[tuple[str, str]]]
                    ) -> list[set[tuple[str, str]]]:
    """What the split sample reads, as clusters that must be kept together: each steep op
    with the values whose sign it follows, each compare, step, integer convert, sort, top-k
    or argmax with its operands (overlapping clusters merged), in program order."""
    clusters = _threshold_clusters(declared)
    steep: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for value, ops in ancestors.items():
        for op in ops:
            steep.setdefault(op, {op}).add(value)
    clusters.extend(steep.values())
    merged: list[set[tuple[str, str]]] = []
    owner: dict[tuple[str, str], int] = {}
    for cluster in clusters:
        into = {owner[key] for key in cluster if key in owner}
        if not into:
            index = len(merged)
            merged.append(set(cluster))
        else:
            index = min(into)
            for other in sorted(into - {index}):
                merged[index] |= merged[other]
                merged[other] = set()
            merged[index] |= cluster
        for key in merged[index]:
            owner[key] = index
    order = {key: position for position, key in enumerate(declared)}
    kept = [cluster for cluster in merged if cluster]
    return sorted(kept, key=lambda c: min(order.get(key, 0) for key in c))


def packed_groups(clusters: list[set[tuple[str, str]]],
                  declared: dict[tuple[str, str], Instruction], budget: int,
                  deciders: frozenset[tuple[str, str]] = frozenset()
                  ) -> list[set[tuple[str, str]]]:
    """The clusters (disjoint) packed into groups whose values' ranges, sized from their
    declared shapes, fit `budget` with `TRACKED_BYTES` kept besides: one group when all fit;
    else the largest first, each into the first group with room for it (a cluster larger
    than the budget alone is a group of its own), since each group costs every sample
    again. The groups come in the program order of their first clusters."""
    room = max(budget - TRACKED_BYTES, 0)
    costs = [group_bytes(cluster, declared, deciders) for cluster in clusters]
    members: list[list[int]] = []
    used: list[int] = []
    for index in sorted(range(len(clusters)), key=lambda i: -costs[i]):
        for group, total in enumerate(used):
            if total + costs[index] <= room:
                members[group].append(index)
                used[group] += costs[index]
                break
        else:
            members.append([index])
            used.append(costs[index])
    members.sort(key=min)
    return [set().union(*(clusters[i] for i in group)) for group in members] or [set()]

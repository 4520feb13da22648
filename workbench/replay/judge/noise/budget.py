"""The noise stage within the memory limit: what its values' ranges cost, sized from the
declared shapes before any sample runs; the stage refused when it cannot fit; what the split
sample reads cut into groups that fit its share of the limit."""

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
# Most bytes of accumulation spreads kept for later samples (`spreads_budget`): this share of
# the memory limit, at most what the program's narrow dots make, and of it what the rest of
# the stage leaves room for, though never less than `SPREAD_FLOOR`. A spread not kept is
# estimated again in each sample, which costs about as much as its dot did in f64.
SPREAD_SHARE = 0.125
SPREAD_FLOOR = 128 * 2**20


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
                       limit: int | None = None) -> StageMemory:
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
    split = min(budget, max((_group_bytes(group, declared) for group in groups), default=0))
    # At most every value's range: a small program keeps far less than the caps.
    kept = min(split + TRACKED_BYTES, _group_bytes(set(declared), declared))
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


def _range_bytes(shape: Shape) -> int:
    """What the samples' range of a value of `shape` keeps: `RANGE_BYTES` a float element."""
    if shape.is_tuple:
        return sum(_range_bytes(part) for part in shape.tuple_shapes)
    if not shape.is_array or shape.element_type not in FLOAT_TYPES:
        return 0
    return RANGE_BYTES * int(np.prod(shape.dims, dtype=np.int64))


def _group_bytes(group: set[tuple[str, str]],
                 declared: dict[tuple[str, str], Instruction]) -> int:
    return sum(_kept_bytes(key, declared) for key in group)


def _kept_bytes(key: tuple[str, str], declared: dict[tuple[str, str], Instruction]) -> int:
    """What the recorder keeps of the value `key`'s samples' range: nothing for a value no op
    rounds (moved or copied, `EXACT`; converted from an integer or a pred), which the
    samples never record (`noisy_interpreter`): the optimizer state a training step reads,
    the constants it broadcasts."""
    instruction = declared.get(key)
    if instruction is None or instruction.opcode in EXACT:
        return 0
    if instruction.opcode == "convert" and \
            converts_exactly(declared.get((key[0], instruction.operands[0]))):
        return 0
    return _range_bytes(instruction.shape)


def needed_clusters(declared: dict[tuple[str, str], Instruction],
                    ancestors: dict[tuple[str, str], list[tuple[str, str]]]
                    ) -> list[set[tuple[str, str]]]:
    """What the split sample reads, as clusters that must be kept together: each steep op
    with the values whose sign it follows, each compare, step, integer convert, sort, top-k
    or argmax with its operands (overlapping clusters merged), in program order."""
    clusters: list[set[tuple[str, str]]] = []
    for (computation, _), instruction in declared.items():
        if instruction.opcode in STEPS | {"compare"} or (
                instruction.opcode in ("convert", "reduce", "sort", "topk")
                and has_discrete(instruction)):
            clusters.append({(computation, name)
                             for name in (instruction.name, *instruction.operands)})
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
                  declared: dict[tuple[str, str], Instruction],
                  budget: int) -> list[set[tuple[str, str]]]:
    """The clusters packed in order into groups whose values' ranges, sized from their
    declared shapes, fit `budget` with `TRACKED_BYTES` kept besides (one group when all fit;
    a cluster larger than the budget alone is a group of its own)."""
    room = max(budget - TRACKED_BYTES, 0)
    groups: list[set[tuple[str, str]]] = []
    current: set[tuple[str, str]] = set()
    used = 0
    for cluster in clusters:
        cost = sum(_kept_bytes(key, declared) for key in cluster - current)
        if current and used + cost > room:
            groups.append(current)
            current, used = set(), 0
            cost = sum(_kept_bytes(key, declared) for key in cluster)
        current |= cluster
        used += cost
    groups.append(current)
    return groups

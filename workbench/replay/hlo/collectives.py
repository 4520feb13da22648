"""Collectives, `partition-id` and `replica-id` with XLA's semantics, over the devices of one
`spmd.DeviceContext` (an interpreter per device; they meet here).

Who takes part (XLA's CollectiveOpGroupMode): with `use_global_device_ids=true` the replica
groups list global device ids (replica * num_partitions + partition); with a `channel_id` and
no global ids they list partition ids (each replica apart); without a `channel_id`, replica
ids (each partition apart). Empty groups `{}` mean everyone in that mode. A group's members are
in the order printed: all-gather concatenates, reduce-scatter and all-to-all split, and
all-reduce combines in that order. `collective-permute` pairs are partition ids with a
channel, replica ids without; a device no pair sends to receives zeros.

An interpreter outside an SPMD run is a world of one device: a collective whose groups name
another device is `unsupported: <op> over more than one device`, as nothing can answer it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.registry import Value, handles
from workbench.replay.hlo.sharding import parse_pairs, parse_replica_groups
from workbench.replay.hlo.spmd import DeviceContext, device_of

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


def _group(context: DeviceContext, instruction: Instruction) -> list[int]:
    """The global device ids of this device's group, in group order."""
    attrs = instruction.attrs
    groups = parse_replica_groups(attrs.get("replica_groups", "{}"))
    partitions, replicas = context.num_partitions, context.replica_count
    replica, partition = divmod(context.device, partitions)
    if attrs.get("use_global_device_ids") == "true":
        mine, count = context.device, context.devices
        to_device = lambda i: i  # noqa: E731
    elif "channel_id" in attrs:
        mine, count = partition, partitions
        to_device = lambda i: replica * partitions + i  # noqa: E731
    else:
        mine, count = replica, replicas
        to_device = lambda i: i * partitions + partition  # noqa: E731
    if not groups:
        groups = [list(range(count))]
    if any(i >= count or i < 0 for group in groups for i in group):
        raise Unsupported(f"{instruction.opcode} over more than one device")
    for group in groups:
        if mine in group:
            return [to_device(i) for i in group]
    raise EvaluationError(f"{instruction.name}: device {context.device} is in no replica group")


def _axis(instruction: Instruction) -> int:
    """The one dimension a gathering or scattering collective works along."""
    if not instruction.dimensions:
        raise EvaluationError(f"{instruction.name}: {instruction.opcode} without dimensions")
    return instruction.dimensions[0]


def _combine(interpreter: Interpreter, instruction: Instruction, values: list[Value]) -> Value:
    """Fold `values` (in group order) with the instruction's reduction computation."""
    if len(values) == 1:
        return np.asarray(values[0])
    name = instruction.called_computations[0] if instruction.called_computations else None
    if name is None:
        raise EvaluationError(f"{instruction.name}: no reduction computation")
    total = np.asarray(values[0])
    for value in values[1:]:
        total = np.asarray(interpreter.apply_scalar(name, [total, np.asarray(value)]))
    return total


def _results(instruction: Instruction, values: list[Value]) -> Value:
    return values[0] if not instruction.shape.is_tuple else tuple(values)


def _arrays(operands: list[Value]) -> list[np.ndarray]:
    if any(isinstance(o, tuple) for o in operands):
        raise Unsupported("a collective over tuple operands")
    return [np.asarray(o) for o in operands]


def _all_reduce(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> list[np.ndarray]:
    context = device_of(interpreter)
    group = _group(context, instruction)
    shared = context.exchange(instruction, _arrays(operands))
    return [
        _combine(interpreter, instruction, [shared[d][k] for d in group])
        for k in range(len(operands))
    ]


@handles("all-reduce", "all-reduce-start")
def all_reduce(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    return _results(instruction, _all_reduce(interpreter, instruction, operands))


@handles("reduce-scatter")
def reduce_scatter(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    context = device_of(interpreter)
    group = _group(context, instruction)
    position = group.index(context.device)
    axis = _axis(instruction)
    totals = _all_reduce(interpreter, instruction, operands)
    return _results(
        instruction, [np.split(total, len(group), axis=axis)[position] for total in totals]
    )


def _gathered(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> list[np.ndarray]:
    context = device_of(interpreter)
    group = _group(context, instruction)
    shared = context.exchange(instruction, _arrays(operands))
    if len(group) == 1:
        return list(shared[context.device])
    axis = _axis(instruction)
    return [np.concatenate([shared[d][k] for d in group], axis=axis) for k in range(len(operands))]


@handles("all-gather")
def all_gather(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    return _results(instruction, _gathered(interpreter, instruction, operands))


@handles("all-gather-start")
def all_gather_start(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    """(operands, results): what all-gather-done reads its result from."""
    results = _gathered(interpreter, instruction, operands)
    if len(operands) == 1:
        return (operands[0], results[0])
    return (tuple(operands), tuple(results))


@handles("all-to-all")
def all_to_all(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    context = device_of(interpreter)
    group = _group(context, instruction)
    position = group.index(context.device)
    arrays = _arrays(operands)
    if instruction.dimensions:  # one array, split along a dimension and concatenated back
        axis = instruction.dimensions[0]
        if len(arrays) != 1:
            raise Unsupported("all-to-all with a split dimension over several operands")
        shared = context.exchange(instruction, np.split(arrays[0], len(group), axis=axis))
        return np.concatenate([shared[d][position] for d in group], axis=axis)
    if len(arrays) != len(group):
        raise EvaluationError(
            f"{instruction.name}: {len(arrays)} operands for a group of {len(group)}"
        )
    shared = context.exchange(instruction, arrays)
    return tuple(shared[d][position] for d in group)


@handles("collective-broadcast")
def collective_broadcast(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    context = device_of(interpreter)
    group = _group(context, instruction)
    shared = context.exchange(instruction, _arrays(operands))
    return _results(instruction, list(shared[group[0]]))


def _permuted(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> np.ndarray:
    context = device_of(interpreter)
    pairs = parse_pairs(instruction.attrs.get("source_target_pairs", "{}"))
    partitions = context.num_partitions
    replica, partition = divmod(context.device, partitions)
    if "channel_id" in instruction.attrs:
        mine, count = partition, partitions
        to_device = lambda i: replica * partitions + i  # noqa: E731
    else:
        mine, count = replica, context.replica_count
        to_device = lambda i: i * partitions + partition  # noqa: E731
    if any(i >= count or i < 0 for pair in pairs for i in pair):
        raise Unsupported(f"{instruction.opcode} over more than one device")
    if len(operands) != 1:
        raise Unsupported(f"{instruction.opcode} with {len(operands)} operands")
    shared = context.exchange(instruction, _arrays(operands))
    sources = [source for source, target in pairs if target == mine]
    if not sources:
        return np.zeros_like(np.asarray(operands[0]))
    return shared[to_device(sources[0])][0]


@handles("collective-permute")
def collective_permute(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    return _permuted(interpreter, instruction, operands)


@handles("collective-permute-start")
def collective_permute_start(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    """(operand, result, context scalars...): collective-permute-done reads element 1."""
    result = _permuted(interpreter, instruction, operands)
    extra = tuple(np.zeros(s.dims, np.uint32) for s in instruction.shape.tuple_shapes[2:])
    return (operands[0], result, *extra)


@handles("all-reduce-done")
def all_reduce_done(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    return operands[0]


@handles("all-gather-done", "collective-permute-done")
def start_done(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    started = operands[0]
    if not isinstance(started, tuple) or len(started) < 2:
        raise EvaluationError(f"{instruction.name}: its -start gave no result")
    return started[1]


@handles("partition-id")
def partition_id(
    interpreter: Interpreter, instruction: Instruction, operands: list[Value]
) -> Value:
    context = device_of(interpreter)
    return np.array(context.device % context.num_partitions, np.uint32)


@handles("replica-id")
def replica_id(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    context = device_of(interpreter)
    return np.array(context.device // context.num_partitions, np.uint32)

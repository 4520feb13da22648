"""Run a module over many devices on one CPU: SPMD-partitioned programs and manual regions.

A module compiled for `num_partitions` x `replica_count` devices is run as one interpreter
per device, each in its own thread, meeting at collectives (`devices.DeviceContext.exchange`: every
device hands in its operands and waits until all have). The other design, one evaluation
vectorized over a leading partition axis, was not built: every op handler would need that
axis, and the devices' programs do not run in lockstep on equal values (`dynamic-slice`
offsets read from tables by `partition-id`, `collective-permute` senders, uneven shards'
padding). What the chosen design costs, measured by `benchmarks/spmd_bench.py` (8 devices,
JAX's tensor-parallel MLP step): 3.3x the unpartitioned module's time at 512 x 1024 x 256
(12.9 ms against 43.2 ms), where numpy's work dominates; 20x on a 64 x 32 toy (0.42 ms
against 8.6 ms), where eight interpreters' per-instruction overhead and thread hand-offs do.
A vectorized run would mainly save that overhead.

Two kinds of step run here (`evaluate_partitioned`):
- *per-device* steps (after the SPMD partitioner; entry parameters have shard shapes): each
  device gets its shard of every global argument (`sharding.shard_of` by the parameter
  shardings) and its own `partition-id`; the result is joined from every device's value by the
  output sharding.
- *global* steps (shapes global, shardings only annotations) run as one program; when they
  hold collectives or manual regions (`shard_map`: `xla.sdy.GlobalToLocalShape` ...
  `LocalToGlobalShape`), every device runs it on the global arguments, the region's entry
  takes the device's shard and its exit joins them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.hlo_ir import HloModule, LiteralValue, Shape
from workbench.replay import memory
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.devices import (
    MANUAL_ENTRY,
    MANUAL_EXIT,
    Aborted,
    DeviceContext,
    Recording,
    Rendezvous,
)
from workbench.replay.hlo.sharding import Sharding, join_shards, parse_sharding, shard_of

# Ops that need to know the device they run on, or the others.
DEVICE_OPS = frozenset(
    (
        "all-reduce",
        "all-reduce-start",
        "all-gather",
        "all-gather-start",
        "reduce-scatter",
        "all-to-all",
        "collective-broadcast",
        "collective-permute",
        "collective-permute-start",
        "partition-id",
        "replica-id",
    )
)


@dataclass(frozen=True)
class Partitioning:
    """How a module is spread over devices: from its header and the shardings of its entry
    parameters and result in the last step that still has global shapes."""

    num_partitions: int
    replica_count: int
    parameters: tuple[Sharding, ...] | None = None
    result: Sharding | None = None

    @property
    def devices(self) -> int:
        return self.num_partitions * self.replica_count


def device_counts(module: HloModule) -> tuple[int, int]:
    """(num_partitions, replica_count) from the module's header (1 when absent)."""
    counts = []
    for key in ("num_partitions", "replica_count"):
        text = module.attributes.get(key, "1")
        try:
            counts.append(max(1, int(text)))
        except ValueError:
            raise EvaluationError(f"{key}={text} is not a count") from None
    return counts[0], counts[1]


def entry_shardings(module: HloModule) -> tuple[tuple[Sharding, ...] | None, Sharding | None]:
    """The entry parameters' shardings (None unless every parameter has one) and the root's."""
    entry = module.entry
    texts = [p.sharding for p in entry.parameters]
    parameters = None
    if texts and all(texts):
        parameters = tuple(parse_sharding(t) for t in texts if t)
    root = parse_sharding(entry.root.sharding) if entry.root.sharding else None
    return parameters, root


def needs_devices(module: HloModule) -> bool:
    """True when a module's value depends on the device it runs on or on the others."""
    return any(
        i.opcode in DEVICE_OPS or i.custom_call_target in MANUAL_ENTRY | MANUAL_EXIT
        for c in module.computations
        for i in c.instructions
    )


# -- running ---------------------------------------------------------------------------------


def run_devices(
    module: HloModule,
    arguments: Sequence[Sequence[LiteralValue]],
    num_partitions: int,
    replica_count: int,
    flush_subnormals: bool = False,
    recording: Recording | None = None,
) -> list[LiteralValue]:
    """Every device's result of `module`'s entry, device d on `arguments[d]`; with
    `recording`, what every collective exchanged is kept in it."""
    from workbench.replay.hlo import evaluate_module
    from workbench.replay.hlo.interpreter import Interpreter

    devices = num_partitions * replica_count
    interpreters = [Interpreter(module, flush_subnormals=flush_subnormals) for _ in range(devices)]
    # every device holds its values at the same time: the estimate covers them all
    memory.check(
        devices * interpreters[0].holds_at_once(module.entry.name),
        f"the values {devices} devices hold at once",
    )
    rendezvous = Rendezvous(devices)
    results: list[LiteralValue | None] = [None] * devices
    errors: list[BaseException | None] = [None] * devices

    def run(device: int) -> None:
        interpreter = interpreters[device]
        interpreter.device = DeviceContext(
            device, num_partitions, replica_count, rendezvous, recording
        )
        try:
            results[device] = evaluate_module(
                module,
                arguments[device],
                interpreter=interpreter,
                flush_subnormals=flush_subnormals,
            )
        except BaseException as error:  # reported below, after every thread stopped
            errors[device] = error
            rendezvous.abort()

    threads = [threading.Thread(target=run, args=(d,), daemon=True) for d in range(devices)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = next(
        (e for e in errors if e is not None and not isinstance(e, Aborted)),
        next((e for e in errors if e is not None), None),
    )
    if first is not None:
        raise first
    return results  # type: ignore[return-value]


def shards_of(sharding: Sharding, value: LiteralValue, device: int) -> LiteralValue:
    if sharding.kind == "tuple":
        if not isinstance(value, tuple) or len(value) != len(sharding.elements):
            raise EvaluationError("a tuple sharding on a value that is not such a tuple")
        return tuple(shards_of(s, v, device) for s, v in zip(sharding.elements, value, strict=True))
    return shard_of(sharding, np.asarray(value), device)


def _joined(sharding: Sharding, values: list[LiteralValue], shape: Shape) -> LiteralValue:
    """The global result of `shape` from every device's."""
    if shape.is_tuple:
        count = len(shape.tuple_shapes)
        elements = sharding.elements if sharding.kind == "tuple" else (sharding,) * count
        if len(elements) != count:
            raise EvaluationError("the output sharding does not match the result tuple")
        return tuple(
            _joined(s, [v[k] for v in values], shape.tuple_shapes[k])  # type: ignore[index]
            for k, s in enumerate(elements)
        )
    shards = {device: np.asarray(value) for device, value in enumerate(values)}
    joined = join_shards(sharding, shards, shape.dims)
    if joined.shape != shape.dims:
        raise EvaluationError(
            f"the devices' results joined by {sharding.kind} sharding have shape "
            f"{list(joined.shape)}, the reference's {list(shape.dims)}"
        )
    return joined


def has_global_shapes(module: HloModule, arguments: Sequence[LiteralValue]) -> bool:
    """True when `arguments` have the entry parameters' (global) shapes."""

    def same(shape, value) -> bool:
        if shape.is_tuple:
            return isinstance(value, tuple) and all(
                same(s, v) for s, v in zip(shape.tuple_shapes, value, strict=False)
            )
        return not isinstance(value, tuple) and tuple(np.shape(value)) == shape.dims

    parameters = module.entry.parameters
    return len(parameters) == len(arguments) and all(
        same(p.shape, a) for p, a in zip(parameters, arguments, strict=True)
    )


def evaluate_partitioned(
    module: HloModule,
    arguments: Sequence[LiteralValue],
    partitioning: Partitioning,
    result_shape: Shape,
    flush_subnormals: bool = False,
) -> LiteralValue:
    """The global result (of `result_shape`, the reference's) of a step of a partitioned
    module on global `arguments`."""
    from workbench.replay.hlo import evaluate_module

    devices = partitioning.devices
    counts = (partitioning.num_partitions, partitioning.replica_count)
    if has_global_shapes(module, arguments):
        if not needs_devices(module):
            return evaluate_module(module, arguments, flush_subnormals=flush_subnormals)
        return run_devices(module, [arguments] * devices, *counts, flush_subnormals)[0]
    if partitioning.parameters is None:
        raise Unsupported("a per-device step of a module whose parameter shardings are unknown")
    if len(partitioning.parameters) != len(arguments):
        raise EvaluationError(
            f"{len(arguments)} arguments for {len(partitioning.parameters)} parameter shardings"
        )
    per_device = [
        [shards_of(s, a, d) for s, a in zip(partitioning.parameters, arguments, strict=True)]
        for d in range(devices)
    ]
    results = run_devices(module, per_device, *counts, flush_subnormals)
    # an output no sharding was given or propagated to is replicated, as the partitioner
    # makes it
    return _joined(partitioning.result or Sharding("replicated"), results, result_shape)

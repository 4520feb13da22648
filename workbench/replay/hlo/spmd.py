"""Run a module over many devices on one CPU: SPMD-partitioned programs and manual regions.

A module compiled for `num_partitions` x `replica_count` devices is run as one interpreter
per device, each in its own thread, meeting at collectives (`DeviceContext.exchange`: every
device hands in its operands and waits until all have). The other design, one evaluation
vectorized over a leading partition axis, was not built: every op handler would need that
axis, and the devices' programs do not run in lockstep on equal values (`dynamic-slice`
offsets read from tables by `partition-id`, `collective-permute` senders, uneven shards'
padding). What the chosen design costs, measured by `benchmarks/spmd_bench.py` (8 devices,
JAX's tensor-parallel MLP step): 3.3x the unpartitioned module's time at 512 x 1024 x 256
(12.9 ms against 43.2 ms), where numpy's work dominates; 20x on a 64 x 32 toy (0.42 ms
against 8.6 ms), where eight interpreters' per-instruction overhead and thread hand-offs do.
A vectorized run would mainly save that overhead.

Two kinds of step run (`partitioned.evaluate_partitioned`):
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
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.sharding import (
    Sharding,
    join_shards,
    parse_sharding,
    shard_of,
)

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
MANUAL_ENTRY = frozenset(("xla.sdy.GlobalToLocalShape", "SPMDFullToShardShape"))
MANUAL_EXIT = frozenset(("xla.sdy.LocalToGlobalShape", "SPMDShardToFullShape"))


class Aborted(EvaluationError):
    """Another device failed, so this one stops waiting."""


class Rendezvous:
    """Where the devices' interpreters meet: each collective's operands, once all arrived."""

    def __init__(self, devices: int) -> None:
        self.devices = devices
        self._condition = threading.Condition()
        self._slots: dict[tuple[int, int], dict[int, list[np.ndarray]]] = {}
        self._readers: dict[tuple[int, int], int] = {}
        self.failed = False

    def exchange(
        self, key: tuple[int, int], device: int, value: list[np.ndarray]
    ) -> dict[int, list[np.ndarray]]:
        with self._condition:
            slot = self._slots.setdefault(key, {})
            slot[device] = value
            if len(slot) == self.devices:
                self._condition.notify_all()
            while len(slot) < self.devices and not self.failed:
                self._condition.wait()
            if self.failed:
                raise Aborted("another device failed")
            self._readers[key] = self._readers.get(key, 0) + 1
            if self._readers[key] == self.devices:
                del self._slots[key], self._readers[key]
            return slot

    def abort(self) -> None:
        with self._condition:
            self.failed = True
            self._condition.notify_all()


@dataclass
class DeviceContext:
    """What one device's interpreter knows of the others."""

    device: int
    num_partitions: int = 1
    replica_count: int = 1
    rendezvous: Rendezvous | None = None
    # instruction name -> what every device handed in, per run (kept by device 0 when set)
    recording: Recording | None = None
    _visits: dict[int, int] = field(default_factory=dict)

    @property
    def devices(self) -> int:
        return self.num_partitions * self.replica_count

    def exchange(
        self, instruction: Instruction, value: list[np.ndarray]
    ) -> dict[int, list[np.ndarray]]:
        """Every device's `value` for this run of `instruction` (loops run it again)."""
        visit = self._visits.get(id(instruction), 0)
        self._visits[id(instruction)] = visit + 1
        if self.rendezvous is None:
            return {self.device: value}
        shared = self.rendezvous.exchange((id(instruction), visit), self.device, value)
        if self.recording is not None and self.device == 0:
            self.recording.setdefault(instruction.name, []).append(dict(shared))
        return shared


Recording = dict[str, list[dict[int, list[np.ndarray]]]]


@dataclass
class ReplayedDevice(DeviceContext):
    """One device run alone, the others' part of each collective read from recordings of
    full runs (`run_devices(recording=...)`) of the modules whose instructions `owners` maps
    to their recording: how one device's values are localized between two steps.

    A run of a module made from those (a cone, a widened shadow) finds its recording by the
    instruction's name and the value this device hands in, the nearest one when no recorded
    value is the same (a shadow's wider values)."""

    recordings: tuple[Recording, ...] = ()
    owners: dict[int, int] = field(default_factory=dict)

    def exchange(
        self, instruction: Instruction, value: list[np.ndarray]
    ) -> dict[int, list[np.ndarray]]:
        owner = self.owners.get(id(instruction))
        chosen = self.recordings if owner is None else (self.recordings[owner],)
        runs = [run for recording in chosen for run in recording.get(instruction.name, ())]
        if not runs:
            raise Unsupported(
                f"{instruction.opcode} {instruction.name} that the devices' run did not reach"
            )
        run = min(runs, key=lambda r: _distance(r[self.device], value))
        shared = {
            device: [
                np.asarray(part, dtype=np.asarray(mine).dtype)
                for part, mine in zip(parts, value, strict=True)
            ]
            for device, parts in run.items()
        }
        shared[self.device] = value
        return shared


def _distance(recorded: list[np.ndarray], value: list[np.ndarray]) -> float:
    """How far this device's recorded hand-in is from `value` (inf when shapes differ)."""
    total = 0.0
    for a, b in zip(recorded, value, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return np.inf
        if a.size:
            difference = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
            total = max(
                total, float(np.nanmax(difference)) if not np.isnan(difference).all() else 0.0
            )
    return total


_ALONE = DeviceContext(0)
_CURRENT: ContextVar[DeviceContext | None] = ContextVar("spmd_device", default=None)


def device_of(interpreter: object) -> DeviceContext:
    """The device an interpreter runs as: its own, the one `as_device` sets, or else the
    only one."""
    return getattr(interpreter, "device", None) or _CURRENT.get() or _ALONE


@contextmanager
def as_device(context: DeviceContext) -> Iterator[None]:
    """Interpreters made inside run as `context`'s device (as localization makes them)."""
    token = _CURRENT.set(context)
    try:
        yield
    finally:
        _CURRENT.reset(token)


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


# -- manual regions -------------------------------------------------------------------------


def manual_entry(
    interpreter: object, instruction: Instruction, operands: list[np.ndarray],
    operand_shardings: list[str | None]
) -> list[np.ndarray]:
    """This device's shards of the global values entering a manual region (Shardy's
    `xla.sdy.GlobalToLocalShape` takes every operand of a `shard_map` at once, each with the
    sharding of the instruction that makes it)."""
    context = device_of(interpreter)
    results = _result_shapes(instruction)
    parts = []
    for operand, text, result in zip(operands, operand_shardings, results, strict=True):
        if text is None:
            raise Unsupported(
                f"custom-call {instruction.custom_call_target} of an operand with no sharding"
            )
        part = shard_of(parse_sharding(text), np.asarray(operand), context.device)
        if part.shape != result.dims:
            raise Unsupported(
                f"custom-call {instruction.custom_call_target} over more than one device"
            )
        parts.append(part)
    return parts


def manual_exit(
    interpreter: object, instruction: Instruction, operands: list[np.ndarray]
) -> list[np.ndarray]:
    """The global values a manual region's per-device values make, each joined by its
    element of the instruction's sharding (a tuple sharding for several operands)."""
    context = device_of(interpreter)
    if instruction.sharding is None:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with no sharding")
    sharding = parse_sharding(instruction.sharding)
    results = _result_shapes(instruction)
    elements = sharding.elements if sharding.kind == "tuple" else (sharding,) * len(results)
    if len(elements) != len(operands):
        raise Unsupported(f"custom-call {instruction.custom_call_target} with "
                          f"{len(operands)} operands and {len(elements)} shardings")
    shards = context.exchange(instruction, [np.asarray(operand) for operand in operands])
    joined_values = []
    for index, (element, result) in enumerate(zip(elements, results, strict=True)):
        joined = join_shards(element, {d: v[index] for d, v in shards.items()}, result.dims)
        if joined.shape != result.dims or len(shards) < _tile_count(element):
            raise Unsupported(
                f"custom-call {instruction.custom_call_target} over more than one device"
            )
        joined_values.append(joined)
    return joined_values


def _result_shapes(instruction: Instruction) -> tuple[Shape, ...]:
    shape = instruction.shape
    return shape.tuple_shapes if shape.is_tuple else (shape,)


def _tile_count(sharding: Sharding) -> int:
    return int(np.prod(sharding.tile_dims)) if sharding.kind == "tiled" else 1

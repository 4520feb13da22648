"""The devices of an SPMD run as its interpreters see them: where they meet at collectives
(`Rendezvous`), what each knows of the others (`DeviceContext`), one device replayed alone
from recordings of a full run (`ReplayedDevice`, for localization), and a manual region's
boundaries (`shard_map`'s `xla.sdy.GlobalToLocalShape` / `LocalToGlobalShape`).

Kept apart from `spmd.py` (which runs modules, so imports the evaluator): the op handlers
import this.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.sharding import Sharding, join_shards, parse_sharding, shard_of

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


# -- manual regions -------------------------------------------------------------------------


def manual_entry(
    interpreter: object, instruction: Instruction, operand: np.ndarray, operand_sharding: str | None
) -> np.ndarray:
    """This device's shard of a global value entering a manual region."""
    context = device_of(interpreter)
    if operand_sharding is None:
        raise Unsupported(
            f"custom-call {instruction.custom_call_target} of an operand with no sharding"
        )
    sharding = parse_sharding(operand_sharding)
    part = shard_of(sharding, np.asarray(operand), context.device)
    if part.shape != instruction.shape.dims:
        raise Unsupported(f"custom-call {instruction.custom_call_target} over more than one device")
    return part


def manual_exit(interpreter: object, instruction: Instruction, operand: np.ndarray) -> np.ndarray:
    """The global value a manual region's per-device values make."""
    context = device_of(interpreter)
    if instruction.sharding is None:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with no sharding")
    sharding = parse_sharding(instruction.sharding)
    shards = context.exchange(instruction, [np.asarray(operand)])
    joined = join_shards(sharding, {d: v[0] for d, v in shards.items()}, instruction.shape.dims)
    if joined.shape != instruction.shape.dims or len(shards) < _tile_count(sharding):
        raise Unsupported(f"custom-call {instruction.custom_call_target} over more than one device")
    return joined


def _tile_count(sharding: Sharding) -> int:
    return int(np.prod(sharding.tile_dims)) if sharding.kind == "tiled" else 1

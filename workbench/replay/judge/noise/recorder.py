"""What the samples keep: each discontinuity's outputs in the first sample and where later
samples differ, each rounding op's range over the samples (what the split sample reads, the
rest within `budget.TRACKED_BYTES`), and the jumps those ranges show."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.hlo.registry import Value
from workbench.replay.judge.noise import budget
from workbench.replay.judge.noise.op_kinds import F32_EPS
from workbench.replay.judge.noise.result_range import hold_outward
from workbench.replay.processes.memory import SMALLEST, DiskArena

JUMP = 0.25  # a sample range beyond this fraction of an array's magnitude is a jump


@dataclass
class Recorder:
    """Each discontinuity's outputs in the first sample and where later samples differ; each
    rounding op's range over the samples: what the split sample reads in f64 (in memory
    within `needed_bytes` in all, on disk beyond), the rest while within `TRACKED_BYTES`."""

    first: dict[tuple[str, str, int], Any] = field(default_factory=dict)
    first_nan: dict[tuple[str, str, int], np.ndarray | None] = field(default_factory=dict)
    nan_flips: dict[tuple[str, str], int] = field(default_factory=dict)
    differing: dict[tuple[str, str], int] = field(default_factory=dict)
    ranges: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    instructions: dict[tuple[str, str], Instruction] = field(default_factory=dict)
    occurrences: dict[tuple[str, str], int] = field(default_factory=dict)
    sample: int = 0
    tracked: int = 0  # bytes of all kept values
    named_only: int = 0  # bytes of those kept only to name flips and jumps
    # Kept beyond `TRACKED_BYTES` (up to `needed_bytes`): what the split sample reads.
    needed: set[tuple[str, str]] = field(default_factory=set)
    needed_bytes: int = 0
    # Of them, those whose range is kept in f32, rounded outward (`budget.deciders`).
    deciders: frozenset[tuple[str, str]] = frozenset()
    # And those whose range is kept on disk, not counted in `needed_bytes` (`budget.spilled`).
    on_disk: frozenset[tuple[str, str]] = frozenset()
    disk: DiskArena | None = None  # where they are kept, made for the first of them
    left_out: int = 0  # values the split sample would read, not kept: no room for them
    # When each flip was first seen, as (sample, values seen before it in that sample): the
    # order a serial run finds them in, whichever samples ran where (`run.Sampled.merged`).
    found_at: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    seen: int = 0  # values seen so far in this sample

    def occurrence(self, computation: str, instruction: Instruction) -> tuple[str, str, int]:
        key = (computation, instruction.name)
        occurrence = self.occurrences.get(key, 0)
        self.occurrences[key] = occurrence + 1
        self.seen += 1
        if self.sample == 0:
            self.instructions.setdefault(key, instruction)
        return (*key, occurrence)

    def see(self, computation: str, instruction: Instruction, value: Value) -> None:
        key = self.occurrence(computation, instruction)
        parts = value if isinstance(value, tuple) else (value,)
        discrete = tuple(np.array(p, copy=True) for p in parts if np.asarray(p).dtype.kind in "biu")
        if not discrete:
            return
        if self.sample == 0:
            size = sum(part.nbytes for part in discrete)
            if self.named_only + size <= budget.TRACKED_BYTES:
                self.tracked += size
                self.named_only += size
                self.first[key] = discrete
            return
        before = self.first.get(key)
        if before is None:
            return
        count = sum(int(np.count_nonzero(a != b)) for a, b in zip(before, discrete, strict=True))
        if count:
            self.differing[key[:2]] = max(self.differing.get(key[:2], 0), count)
            self.found_at.setdefault(key[:2], (self.sample, self.seen))

    def see_float(self, computation: str, instruction: Instruction, value: np.ndarray,
                  eps: float) -> None:
        """Record a rounding op's sample `value` (declared with machine epsilon `eps`)."""
        key = self.occurrence(computation, instruction)
        if value.dtype.kind != "f":
            return
        known = self.ranges.get(key)
        if known is None:
            if self.sample != 0:
                return
            needed = key[:2] in self.needed
            outward = self._outward(key)
            kept = np.float32 if outward or (not needed and eps >= F32_EPS) else value.dtype
            size = value.size * (2 * np.dtype(kept).itemsize + 1)
            # On disk: planned so, or past the budget (a loop's later trips, which the plan
            # counts once); small ones stay in memory, or out past the budget.
            planned = key[:2] in self.on_disk
            over = needed and not planned and self.tracked + size > self.needed_bytes
            on_disk = (planned or over) and value.size * np.dtype(kept).itemsize >= SMALLEST
            if over and not on_disk:
                self.left_out += 1
                return
            if not needed and self.named_only + size > budget.TRACKED_BYTES:
                return
            pair = self._new_range(value.shape, np.dtype(kept), on_disk)
            if pair is None:  # no room on disk after all
                self.left_out += 1
                return
            low, high = pair
            self.tracked += 0 if on_disk else size
            self.named_only += 0 if needed else size
            if outward:
                hold_outward(low.reshape(-1), high.reshape(-1), value.reshape(-1), first=True)
            else:
                with np.errstate(over="ignore"):  # beyond f32's largest: infinite, as it is
                    np.copyto(low, value, casting="same_kind")
                    np.copyto(high, value, casting="same_kind")
            self.ranges[key] = (low, high)
            nans = np.isnan(value)
            self.first_nan[key] = nans if nans.any() else None
            return
        first_nan = self.first_nan[key]
        if first_nan is None and not np.isnan(np.add.reduce(value, axis=None)):
            count = 0  # no NaN then, none now: one pass rather than three
        else:
            now = np.isnan(value)
            count = int(np.count_nonzero(now if first_nan is None else now != first_nan))
        if count:  # a domain boundary (sqrt, log of an operand near 0) crossed by rounding
            self.nan_flips[key[:2]] = max(self.nan_flips.get(key[:2], 0), count)
            self.found_at.setdefault(key[:2], (self.sample, self.seen))
        if self._outward(key):
            hold_outward(known[0].reshape(-1), known[1].reshape(-1), value.reshape(-1),
                         first=False)
            return
        # In the range's own type: rounding is monotonic, so min(low, round(v)) is
        # round(min(low, v)), and an f32 range is then twice as fast as a mixed one.
        np.fmin(known[0], value, out=known[0], dtype=known[0].dtype)
        np.fmax(known[1], value, out=known[1], dtype=known[1].dtype)

    def _new_range(self, shape: tuple[int, ...], dtype: np.dtype, on_disk: bool
                   ) -> tuple[np.ndarray, np.ndarray] | None:
        """Arrays for a range's low and high, contiguous (so flat views of them are the
        range), on disk if asked (None when the disk has no room for them)."""
        if not on_disk:
            return np.empty(shape, dtype), np.empty(shape, dtype)
        disk = self.disk = self.disk or DiskArena()
        low = disk.array(shape, dtype)
        high = None if low is None else disk.array(shape, dtype)
        return None if low is None or high is None else (low, high)

    def _outward(self, key: tuple[str, str, int]) -> bool:
        """Whether the value's range is a decider's for the split sample: in f32, rounded
        outward (`budget.deciders`)."""
        return key[:2] in self.needed and key[:2] in self.deciders

    def latest_range(self, computation: str, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The samples' range of the latest value of `name` in `computation`, if tracked."""
        occurrence = self.occurrences.get((computation, name), 0) - 1
        return self.ranges.get((computation, name, occurrence))

    def jumps(self) -> dict[tuple[str, str], int]:
        """Elements whose sample range exceeds `JUMP` of their array's magnitude, by
        instruction, in the order the first sample made them (so operands come first)."""
        found: dict[tuple[str, str], int] = {}
        for (computation, name, _), (low, high) in self.ranges.items():
            with np.errstate(invalid="ignore", over="ignore"):
                magnitude = np.maximum(np.abs(low), np.abs(high))
                finite = np.isfinite(magnitude)
                if not np.any(finite):
                    continue
                scale = float(magnitude[finite].max())
                count = int(np.count_nonzero(finite & (high - low > JUMP * scale)))
            if count and scale > 0:
                found[(computation, name)] = found.get((computation, name), 0) + count
        return found

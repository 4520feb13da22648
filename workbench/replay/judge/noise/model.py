"""What the noise stage finds: the samples' range per element, and the discontinuities that
rounding noise decided (`Noise`, `Discontinuity`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SAMPLES = 12  # random-rounding evaluations of the reference

# What the stage tells of each of its evaluations as it starts (`run.noise_of`): what it is
# (`sample 3 of 12, group 2 of 10`) and how many of its evaluations at most follow it.
StageProgress = Callable[[str, int], None]


@dataclass(frozen=True)
class Discontinuity:
    """Where rounding noise inside the reference decides a value: a discontinuous instruction
    whose output differed between samples or that the split sample moved (`flipped`; for a
    value moved across zero, the steep op it answers to), or one whose samples jump across more
    than `JUMP` of its array's magnitude (the operand within its own noise; a steep function
    such as AdamW's first update g / (|g| + eps)); `elements` over all its runs."""

    name: str
    opcode: str
    computation: str
    op_name: str
    elements: int
    flipped: bool

    def __str__(self) -> str:
        where = f", {self.op_name}" if self.op_name else ""
        how = "flips" if self.flipped else "jumps"
        return f"{self.name} ({self.opcode}{where}) {how} at {self.elements} element(s)"


@dataclass
class Noise:
    """The samples' per-element range (`low`, `high`, with the reference's structure, each
    in its output's storage type rounded outward: `result_range.py`; NaN only where every
    sample was), where some random sample or the domain sample was NaN
    (`nan_seen`, boolean arrays; None for the non-float parts and when not known), where the
    noise decided values (discontinuities first, then jumps; each by how many elements, most
    first), and what the split sample could not cover within its memory budget (`left_out`,
    None when nothing)."""

    low: Any
    high: Any
    discontinuities: tuple[Discontinuity, ...] = ()
    nan_seen: Any = None
    left_out: str | None = None

"""XLA's buffer assignment and memory usage reports (`*-buffer-assignment.txt`,
`*-memory-usage-report.txt` beside `<platform>_after_optimizations`), summarized.

The buffer assignment (`BufferAssignment::ToString`) lists allocations, each with its size,
what it is for and the values placed in it:

    allocation 3: size 320, output shape is |f32[8,10]|, maybe-live-out:
     value: <43 ynn_fusion @0> (size=320,offset=0): f32[8,10]{1,0}

The memory usage report gives, per memory space, `Memory Space: <name> (color=N)` and
`Total bytes: <n> (<human>)`, then the buffers by cumulative size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.sources import ReadError

_ALLOCATION_RE = re.compile(r"^allocation (?P<index>\d+): size (?P<size>\d+)(?P<rest>.*?):?\s*$")
# The value's name may carry a tuple index and a phi mark: `<31 arg_tuple.5{1} (phi) @0>`.
_VALUE_RE = re.compile(r"^ value: <\d+ (?P<name>.+?) @[^ >]*> \(size=(?P<size>\d+),offset=\d+\)")
_SPACE_RE = re.compile(r"^Memory Space: (?P<name>.+?) \(color=(?P<color>\d+)\)\s*$")
_TOTAL_RE = re.compile(r"^Total bytes: (?P<bytes>\d+)")
# What an allocation is for, in the order XLA prints its attributes.
_ROLES = (("parameter", re.compile(r"\bparameter \d+")), ("output", re.compile(r"\boutput\b")),
          ("constant", re.compile(r"\bconstant\b")),
          ("thread-local", re.compile(r"\bthread-local\b")),
          ("preallocated-temp", re.compile(r"\bpreallocated-temp\b")),
          ("live-out", re.compile(r"\bmaybe-live-out\b")))


@dataclass
class Allocation:
    index: int
    size: int
    roles: tuple[str, ...]  # parameter, output, constant, thread-local, preallocated-temp,
    #                         live-out; empty for a plain temporary
    values: list[str] = field(default_factory=list)

    @property
    def role(self) -> str:
        """The main role, for grouping: the first one printed, or "temp"."""
        return next((r for r in self.roles if r != "live-out"), "temp")


@dataclass
class BufferAssignment:
    allocations: list[Allocation]

    @property
    def total_bytes(self) -> int:
        return sum(a.size for a in self.allocations)

    def by_role(self) -> dict[str, tuple[int, int]]:
        """role -> (allocations, bytes), largest first."""
        totals: dict[str, list[int]] = {}
        for allocation in self.allocations:
            entry = totals.setdefault(allocation.role, [0, 0])
            entry[0] += 1
            entry[1] += allocation.size
        return {role: (count, size) for role, (count, size) in
                sorted(totals.items(), key=lambda item: -item[1][1])}

    def largest(self, count: int = 5) -> list[Allocation]:
        return sorted(self.allocations, key=lambda a: (-a.size, a.index))[:count]


def read_buffer_assignment(text: str, file: str) -> BufferAssignment:
    """Raises ReadError when the text is not a buffer assignment."""
    allocations: list[Allocation] = []
    for number, line in enumerate(text.splitlines(), 1):
        if match := _ALLOCATION_RE.match(line):
            rest = match["rest"]
            roles = tuple(role for role, pattern in _ROLES if pattern.search(rest))
            allocations.append(Allocation(int(match["index"]), int(match["size"]), roles))
        elif line.startswith(" value: "):
            value = _VALUE_RE.match(line)
            if not allocations or value is None:
                raise ReadError(file, f"line {number}: a value outside an allocation")
            allocations[-1].values.append(value["name"])
    if not allocations:
        raise ReadError(file, "no `allocation N: size S` lines: not a buffer assignment")
    return BufferAssignment(allocations)


@dataclass
class MemorySpace:
    name: str
    color: int
    total_bytes: int


def read_memory_usage(text: str, file: str) -> list[MemorySpace]:
    """The memory spaces of a memory usage report. Raises ReadError when there are none."""
    spaces: list[MemorySpace] = []
    pending: tuple[str, int] | None = None
    for line in text.splitlines():
        if match := _SPACE_RE.match(line):
            pending = (match["name"], int(match["color"]))
        elif (match := _TOTAL_RE.match(line)) and pending is not None:
            spaces.append(MemorySpace(pending[0], pending[1], int(match["bytes"])))
            pending = None
    if not spaces:
        raise ReadError(file, "no `Memory Space:` with `Total bytes:`: not a memory usage report")
    return spaces


def human_bytes(size: int) -> str:
    """1234567 -> `1.2 MiB` (XLA's own binary units)."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"

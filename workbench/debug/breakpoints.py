"""Breakpoints on a compiler pipeline, written as short specs a user types.

    pass:REGEX        a step made by a pass whose name matches (`pass:fusion`, `pass:^cse$`)
    action:TAG        a pass run whose action log shows an action with this tag
    loc:FILE:LINE     a step that changes the IR of code from this source line (`loc:model.py:4`)
    op:NAME           an op (HLO opcode or MLIR op name) appears: absent before, present after
    op-change:NAME    the count of an op changes
    mismatch          the first step whose replayed result differs from the reference

What each kind tests is in `StepInfo` (facts.py); the stepping that stops at them is
controller.py. UI-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

KINDS = ("pass", "action", "loc", "op", "op-change", "mismatch")


class BreakpointError(ValueError):
    """A spec that does not parse; the message says what a valid one looks like."""


@dataclass
class Breakpoint:
    id: int
    kind: str
    pattern: str = ""
    enabled: bool = True
    hits: int = 0
    _regex: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _location: tuple[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def spec(self) -> str:
        return self.kind if self.kind == "mismatch" else f"{self.kind}:{self.pattern}"

    @property
    def regex(self) -> re.Pattern[str]:
        assert self._regex is not None
        return self._regex

    @property
    def location(self) -> tuple[str, int]:
        """(file, line) of a `loc` breakpoint."""
        assert self._location is not None
        return self._location


def parse_spec(spec: str) -> tuple[str, str]:
    """(kind, pattern) of a spec. Raises BreakpointError saying what is wrong."""
    spec = spec.strip()
    if spec == "mismatch":
        return "mismatch", ""
    kind, sep, pattern = spec.partition(":")
    if not sep or kind not in KINDS:
        example = f"pass:{spec}" if not sep and spec else "pass:CSE"
        raise BreakpointError(
            f"{spec!r}: write KIND:PATTERN with KIND one of pass, action, loc, op, op-change "
            f"(e.g. {example}), or just `mismatch`")
    if not pattern:
        raise BreakpointError(f"{spec!r}: nothing after {kind}:")
    if kind == "pass":
        try:
            re.compile(pattern)
        except re.error as error:
            raise BreakpointError(f"{spec!r}: not a regular expression: {error}") from None
    if kind == "loc":
        file, _, line = pattern.rpartition(":")
        if not file or not line.isdigit():
            raise BreakpointError(f"{spec!r}: a location is FILE:LINE, e.g. loc:model.py:12")
    return kind, pattern


class BreakpointList:
    """Numbered breakpoints (numbers are never reused, as in gdb)."""

    def __init__(self) -> None:
        self._items: dict[int, Breakpoint] = {}
        self._next = 1

    def add(self, spec: str) -> Breakpoint:
        kind, pattern = parse_spec(spec)
        breakpoint_ = Breakpoint(self._next, kind, pattern)
        if kind == "pass":
            breakpoint_._regex = re.compile(pattern)
        if kind == "loc":
            file, _, line = pattern.rpartition(":")
            breakpoint_._location = (file, int(line))
        self._items[breakpoint_.id] = breakpoint_
        self._next += 1
        return breakpoint_

    def remove(self, number: int) -> None:
        if number not in self._items:
            raise KeyError(f"no breakpoint {number}")
        del self._items[number]

    def enable(self, number: int, enabled: bool = True) -> None:
        if number not in self._items:
            raise KeyError(f"no breakpoint {number}")
        self._items[number].enabled = enabled

    def __iter__(self) -> Iterator[Breakpoint]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, number: int) -> Breakpoint:
        return self._items[number]

    def active(self) -> list[Breakpoint]:
        return [b for b in self._items.values() if b.enabled]

    def wants(self, kind: str) -> bool:
        """Whether an enabled breakpoint of `kind` exists (so costly facts are read only then)."""
        return any(b.kind == kind for b in self.active())

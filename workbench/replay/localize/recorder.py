"""The interpreter observer that hands localization every value of the frames it records
(entry, fusion, call and loop bodies), and how those values are held and compared bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, Instruction, LiteralValue
from workbench.replay.judge.compare import same_bits
from workbench.replay.localize.match import (
    CALLS,
    Frame,
)
from workbench.replay.localize.result import DynKey


class Enough(Exception):
    """Raised by a recorder that has every value it wants: ends the evaluation early."""


@dataclass
class _Frame:
    path: Frame
    loops: tuple[int, ...]
    recorded: bool
    current: Instruction | None = None
    counts: dict[tuple[str, str], int] = field(default_factory=dict)


class Recorder:
    """An interpreter observer that hands every value of the recorded frames (the entry and
    what fusion, call, while and conditional run; not reducers or comparators) to `sink`
    with its site key and loop iterations; `known` may give a recorded instruction's value
    before it is computed (see `Search.known`)."""

    def __init__(self, sink: Callable[[DynKey, Instruction, Any], None],
                 known: Callable[[DynKey], Any] | None = None) -> None:
        self.sink = sink
        self.known = known
        self.stack: list[_Frame] = []

    def enter(self, computation: Computation) -> None:
        if not self.stack:
            self.stack.append(_Frame((), (), True))
            return
        parent = self.stack[-1]
        caller = parent.current
        element = (caller.name if caller else "?", computation.name)
        count = parent.counts.get(element, 0)
        parent.counts[element] = count + 1
        recorded = parent.recorded and caller is not None and caller.opcode in CALLS
        loops = parent.loops + ((count,) if caller is not None and caller.opcode == "while"
                                else ())
        self.stack.append(_Frame((*parent.path, element), loops, recorded))

    def before(self, instruction: Instruction) -> Any:
        frame = self.stack[-1]
        frame.current = instruction
        if self.known is None or not frame.recorded or instruction.opcode in CALLS:
            return None
        return self.known(((frame.path, instruction.name), frame.loops))

    def value(self, instruction: Instruction, value: Any) -> None:
        frame = self.stack[-1]
        if frame.recorded:
            self.sink(((frame.path, instruction.name), frame.loops), instruction, value)

    def leave(self) -> None:
        self.stack.pop()


def plain_value(value: Any, instruction: Instruction,
                sub_byte_types: Container[str]) -> LiteralValue:
    """A value as the comparison wants it: logical sub-byte values (of `sub_byte_types`, the
    evaluator's `SUB_BYTE_WIDTHS`, stored a byte each), numpy arrays."""
    if type(value) is np.ndarray and instruction.shape.element_type not in sub_byte_types:
        return value  # the common case, once per value
    from workbench.replay.hlo import sub_byte

    value = sub_byte.from_storage(value, instruction.shape)
    if isinstance(value, tuple):
        return tuple(np.asarray(v) if not isinstance(v, tuple) else v for v in value)
    return np.asarray(value)


def bit_identical(a: LiteralValue, b: LiteralValue) -> bool:
    """Bit for bit the same value: one cheap pass, the common case before the culprit."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(bit_identical(x, y) for x, y in zip(a, b, strict=True)))
    return same_bits(a, b)

"""The one table from HLO opcode to the function that evaluates it.

Op modules register with `@handles("add", ...)`; the interpreter asks `handler_for(opcode)`,
which raises `Unsupported(opcode)` for anything not registered, so a missing op is always
reported as `unsupported: <opcode>`, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.replay.errors import Unsupported

if TYPE_CHECKING:
    from workbench.hlo_ir import Instruction
    from workbench.replay.hlo.interpreter import Interpreter

# A value: an ndarray (numpy scalars count), or a tuple of values.
Value = Any
Handler = Callable[["Interpreter", "Instruction", list[Value]], Value]

HANDLERS: dict[str, Handler] = {}


def handles(*opcodes: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the evaluator of `opcodes`."""

    def register(function: Handler) -> Handler:
        for opcode in opcodes:
            if opcode in HANDLERS:
                raise ValueError(f"opcode {opcode} registered twice")
            HANDLERS[opcode] = function
        return function

    return register


def handler_for(opcode: str) -> Handler:
    try:
        return HANDLERS[opcode]
    except KeyError:
        raise Unsupported(opcode) from None


def supported_opcodes() -> list[str]:
    """Every opcode the evaluator implements (some only for some types or attributes)."""
    return sorted(HANDLERS)

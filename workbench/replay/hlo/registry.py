"""The one table from HLO opcode to the function that evaluates it, and from custom-call
target to the function that evaluates that call.

Op modules register with `@handles("add", ..., elementwise=True)`, declaring the op's traits
where it is registered: `elementwise` (the interpreter may run it on arrays of scalars in a
batched reducer or comparator) and `bit_exact` (its result is defined bit for bit, so the f64
shadow keeps it in the program's types). Custom-call targets register the same way with
`@handles_custom_call("target", ...)`. The interpreter asks `handler_for(opcode)`, which
raises `Unsupported(opcode)` for anything not registered, so a missing op is always reported
as `unsupported: <opcode>` (`unsupported: custom-call <target>`), never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.replay.errors import Unsupported

if TYPE_CHECKING:
    from workbench.hlo_ir import Instruction

# A value: an ndarray (numpy scalars count), or a tuple of values.
Value = Any
# A handler takes the interpreter running it (each annotates it as `interpreter.Interpreter`;
# Any here, so the table sits below the interpreter that consults it), the instruction and
# its operands' values.
Handler = Callable[[Any, "Instruction", list[Value]], Value]

HANDLERS: dict[str, Handler] = {}
CUSTOM_CALLS: dict[str, Handler] = {}  # by custom-call target
ELEMENTWISE: set[str] = set()  # opcodes registered `elementwise`
BIT_EXACT: set[str] = set()  # opcodes registered `bit_exact`


def handles(*opcodes: str, elementwise: bool = False,
            bit_exact: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated function as the evaluator of `opcodes`, with their traits."""

    def register(function: Handler) -> Handler:
        for opcode in opcodes:
            _add(HANDLERS, opcode, function, "opcode")
            if elementwise:
                ELEMENTWISE.add(opcode)
            if bit_exact:
                BIT_EXACT.add(opcode)
        return function

    return register


def handles_custom_call(*targets: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the evaluator of custom-calls to `targets`."""

    def register(function: Handler) -> Handler:
        for target in targets:
            _add(CUSTOM_CALLS, target, function, "custom-call target")
        return function

    return register


def _add(table: dict[str, Handler], name: str, function: Handler, what: str) -> None:
    if name in table:
        raise ValueError(f"{what} {name} registered twice")
    table[name] = function


def handler_for(opcode: str) -> Handler:
    try:
        return HANDLERS[opcode]
    except KeyError:
        raise Unsupported(opcode) from None


def custom_call_handler_for(target: str) -> Handler:
    try:
        return CUSTOM_CALLS[target]
    except KeyError:
        raise Unsupported(f"custom-call {target}" if target else "custom-call") from None


def supported_opcodes() -> list[str]:
    """Every opcode the evaluator implements (some only for some types or attributes)."""
    return sorted(HANDLERS)

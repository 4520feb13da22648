"""Applying reducer / combiner computations: recognized ones as numpy, any other batched.

reduce, reduce-window, scatter and select-and-scatter take a computation that combines two
values. The usual ones (add, multiply, maximum, minimum, and, or, xor of the two parameters,
alone or with their result converted to a narrower float type and back, as float
normalization leaves a bf16 adder) become numpy calls; anything else is run batched over all
positions that combine at the same step (`Interpreter.apply_scalar`), in XLA's sequential
order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.replay.hlo.dtypes import convert, dtype_of
from workbench.replay.hlo.elementwise import Fn, binary_function
from workbench.replay.hlo.registry import Value

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

RECOGNIZED = frozenset(("add", "multiply", "maximum", "minimum", "and", "or", "xor"))


def recognize_binary(interpreter: Interpreter, name: str) -> str | None:
    """The opcode when computation `name` is `op(parameter 0, parameter 1)` (either order),
    for a commutative op in RECOGNIZED; else None."""
    computation = interpreter.computation(name)
    if len(computation.instructions) != 3:
        return None
    root = computation.root
    if root.opcode not in RECOGNIZED or len(root.operands) != 2:
        return None
    numbers = set()
    for operand in root.operands:
        instruction = computation.by_name[operand]
        if instruction.opcode != "parameter" or instruction.shape != root.shape:
            return None
        numbers.add(instruction.parameter_number)
    return root.opcode if numbers == {0, 1} else None


# Types a combiner may convert its result to and back (`recognize_rounded`): whole bytes;
# f64 where the shadow (`shadow.py`) made the round trip an identity.
ROUNDED_TO = frozenset(("bf16", "f16", "f32", "f64"))


def recognize_rounded(interpreter: Interpreter, name: str) -> tuple[str, str] | None:
    """(opcode, type) when computation `name` is `convert(convert(op(parameter 0,
    parameter 1), type), back)`: a recognized op whose result is rounded to a narrower float
    type and back (what XLA's float normalization makes of a bf16 reduction's adder); else
    None."""
    computation = interpreter.computation(name)
    if len(computation.instructions) != 5:
        return None
    root = computation.root
    if root.opcode != "convert" or len(root.operands) != 1:
        return None
    narrow = computation.by_name[root.operands[0]]
    if narrow.opcode != "convert" or narrow.shape.element_type not in ROUNDED_TO:
        return None
    op = computation.by_name[narrow.operands[0]]
    if op.opcode not in RECOGNIZED or len(op.operands) != 2 or op.shape != root.shape:
        return None
    parameters = [computation.by_name[operand] for operand in op.operands]
    if any(p.opcode != "parameter" or p.shape != root.shape for p in parameters):
        return None
    if {p.parameter_number for p in parameters} != {0, 1}:
        return None
    return op.opcode, narrow.shape.element_type


def _rounded(opcode: str, rounded_to: str, dtype: np.dtype) -> Fn:
    """`opcode` on two arrays of `dtype`, its result rounded to `rounded_to` and back."""
    function = binary_function(opcode, dtype)
    narrow = dtype_of(rounded_to)
    return lambda x, y: convert(convert(function(x, y), narrow), dtype)


class Combiner:
    """Combines accumulators with new values: `combiner(accumulators, values)`.

    Works on lists (variadic reducers); each call is one sequential step for all positions.
    """

    def __init__(self, interpreter: Interpreter, name: str, dtypes: Sequence[np.dtype]) -> None:
        self.interpreter = interpreter
        self.name = name
        self.opcode = recognize_binary(interpreter, name) if len(dtypes) == 1 else None
        self.function = binary_function(self.opcode, dtypes[0]) if self.opcode else None
        if self.function is None and len(dtypes) == 1 and not interpreter.flush_subnormals:
            rounded = recognize_rounded(interpreter, name)
            if rounded is not None:  # one step as numpy calls, not a computation run
                self.function = _rounded(*rounded, dtypes[0])

    def __call__(self, accumulators: list[np.ndarray], values: list[np.ndarray]) -> list[Value]:
        if self.function is not None:
            return [self.function(accumulators[0], values[0])]
        result = self.interpreter.apply_scalar(self.name, [*accumulators, *values])
        return list(result) if isinstance(result, tuple) else [result]


def combine_at(combiner: Combiner, targets: list[np.ndarray], indices: np.ndarray,
               updates: list[np.ndarray]) -> None:
    """targets[i] = combiner(targets[i], update) for each (i, update) in order, in place.

    `targets` are flat writable arrays. Repeated indices are applied in their given order:
    the k-th occurrence of every index is combined in round k (batched across indices).
    """
    count = indices.size
    if count == 0:
        return
    order = np.argsort(indices, kind="stable")
    ordered = indices[order]
    first = np.ones(count, bool)
    first[1:] = ordered[1:] != ordered[:-1]
    group_start = np.maximum.accumulate(np.where(first, np.arange(count), 0))
    rank = np.empty(count, np.int64)
    rank[order] = np.arange(count) - group_start
    rounds = int(rank.max()) + 1
    for round_number in range(rounds):
        chosen = rank == round_number if rounds > 1 else slice(None)
        where = indices[chosen]
        current = [target[where] for target in targets]
        combined = combiner(current, [update[chosen] for update in updates])
        for target, value in zip(targets, combined, strict=True):
            target[where] = value

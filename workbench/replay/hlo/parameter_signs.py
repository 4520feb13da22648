"""Which entry parameters a real run never feeds a negative number, as their sign shows.

Fake data draws floats from N(0, 1) and integers from [-8, 8), so half of an optimizer's
second moment is negative, and so is its step count half the time: `sqrt(v)` is then NaN on
half the update, or (a negative count's bias correction `1 - b2 ** count` is negative) on all
of it, which hides any wrong number there and puts the values beside it on a domain boundary
that only the noise stage can judge. The parameters found here are drawn non-negative instead
(`inputs.fake_inputs`): the floats whose sign reaches an op defined only at or above zero
(AdamW's `v`, a batch norm's running variance), and the numbers whose sign reaches the
exponent of a power (a step count, an integer in optax, a float in PyTorch: what a program
raises a decay to is how often it decayed).

A parameter's sign *reaches* a value when the value is made from it by ops through which a
negative number stays as negative as the rest lets it: sums, products and quotients of other
values, the first operand of a difference, moves, slices, reductions, conversions, selects,
and the computations a call, fusion, loop or branch runs. A square (`x * x`), an `abs`, an
`exp` or a `sqrt` makes the value whatever its operand's sign, and a negation or what is taken
away flips it, so the sign stops there: a layer norm's or an RMS norm's input keeps its sign.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Union

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.replay.errors import Unsupported
from workbench.replay.hlo.dtypes import dtype_of, kind_of

# The entry parameters whose sign a value carries: one set per array, a tuple for a tuple.
Sources = Union[frozenset[int], tuple["Sources", ...]]  # noqa: UP007

NONE: frozenset[int] = frozenset()
# Undefined (NaN) below zero, or (log-plus-one) below -1, where |N(0, 1)| never goes.
DEFINED_AT_OR_ABOVE_ZERO = frozenset(("sqrt", "rsqrt", "log", "log-plus-one"))
# Ops whose every operand's sign reaches the result.
_EVERY_OPERAND = frozenset((
    "add", "multiply", "divide", "maximum", "minimum", "convert", "copy", "reshape",
    "broadcast", "transpose", "slice", "concatenate", "dot", "reverse", "bitcast",
    "reduce-precision", "pad", "reduce", "reduce-window", "sort", "all-reduce", "all-gather",
    "collective-permute", "all-to-all", "reduce-scatter"))
# Ops only some of whose operands' signs reach the result, by operand position.
_SOME_OPERANDS = {
    "subtract": (0,), "select": (1, 2), "clamp": (1,), "dynamic-slice": (0,),
    "dynamic-update-slice": (0, 1), "gather": (0,)}


def non_negative_parameters(module: HloModule) -> frozenset[int]:
    """The entry's parameters (by number) drawn non-negative: floats whose sign reaches the
    operand of an op defined only at or above zero (`DEFINED_AT_OR_ABOVE_ZERO`, and a power
    with a constant exponent that is not an integer), and numbers whose sign reaches a power's
    exponent."""
    flow = _SignFlow(module)
    entry = module.entry
    flow.computation(entry, tuple(_leaves_of(p.shape.is_tuple, len(p.shape.tuple_shapes),
                                             frozenset((p.parameter_number or 0,)))
                                  for p in entry.parameters))
    kinds = {p.parameter_number or 0: _kinds(p.shape) for p in entry.parameters}
    floats = {n for n in flow.reaching if kinds.get(n, set()) & _FLOATS}
    counts = {n for n in flow.exponents if kinds.get(n, set()) & (_FLOATS | _INTEGERS)}
    return frozenset(floats | counts)


_FLOATS = frozenset(("float", "narrow"))
_INTEGERS = frozenset(("signed", "unsigned"))


def _kinds(shape: Shape) -> set[str]:
    """The kinds (`dtypes.kind_of`) of a parameter's arrays; none for a type numpy cannot
    hold (a token)."""
    if shape.is_tuple:
        return {kind for inner in shape.tuple_shapes for kind in _kinds(inner)}
    try:
        return {kind_of(dtype_of(shape.element_type))}
    except Unsupported:
        return set()


def _leaves_of(is_tuple: bool, count: int, sources: frozenset[int]) -> Sources:
    return tuple(sources for _ in range(count)) if is_tuple else sources


def _union(values: list[Sources]) -> frozenset[int]:
    found: set[int] = set()
    for value in values:
        found |= _flat(value)
    return frozenset(found)


def _flat(value: Sources) -> frozenset[int]:
    if isinstance(value, frozenset):
        return value
    return _union(list(value))


class _SignFlow:
    """Follows each entry parameter's sign forward, into every computation it is passed to,
    and notes those that arrive at a domain's operand (`reaching`) or at a power's exponent
    (`exponents`)."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self.reaching: set[int] = set()
        self.exponents: set[int] = set()
        self._done: dict[tuple[str, tuple[Sources, ...]], Sources] = {}

    def computation(self, computation: Computation, arguments: tuple[Sources, ...]) -> Sources:
        key = (computation.name, arguments)
        if key in self._done:
            return self._done[key]
        self._done[key] = NONE  # a computation that calls itself adds nothing more
        values: dict[str, Sources] = {}
        for instruction in computation.instructions:
            operands = [values.get(name, NONE) for name in instruction.operands]
            if instruction.opcode == "parameter":
                number = instruction.parameter_number or 0
                values[instruction.name] = arguments[number] if number < len(arguments) else NONE
                continue
            if operands and self._defined_at_or_above_zero(computation, instruction):
                self.reaching |= _flat(operands[0])
            if instruction.opcode == "power" and len(operands) > 1:
                self.exponents |= _flat(operands[1])
            values[instruction.name] = self._result(instruction, operands)
        self._done[key] = values.get(computation.root_name, NONE)
        return self._done[key]

    def _result(self, instruction: Instruction, operands: list[Sources]) -> Sources:
        opcode = instruction.opcode
        if opcode == "multiply" and len(set(instruction.operands)) == 1:
            return NONE  # a square
        if opcode in _EVERY_OPERAND:
            return _union(operands)
        if opcode in _SOME_OPERANDS:
            return _union([operands[i] for i in _SOME_OPERANDS[opcode] if i < len(operands)])
        if opcode == "tuple":
            return tuple(operands)
        if opcode == "get-tuple-element":
            whole = operands[0] if operands else NONE
            index = instruction.tuple_index or 0
            return whole[index] if isinstance(whole, tuple) and index < len(whole) else whole
        if opcode in ("call", "fusion", "async-start"):
            return self._call(instruction.called_computations[:1], tuple(operands))
        if opcode == "while":
            return self._loop(instruction, operands[0] if operands else NONE)
        if opcode == "conditional":
            results = [self._call([name], (operand,)) for name, operand
                       in zip(instruction.called_computations, operands[1:], strict=False)]
            return _union(results)
        return NONE

    def _call(self, names: list[str], arguments: tuple[Sources, ...]) -> Sources:
        called = [self.module.by_name.get(name) for name in names]
        results = [self.computation(c, arguments) for c in called if c is not None]
        return results[0] if len(results) == 1 else _union(results)

    def _loop(self, instruction: Instruction, state: Sources) -> Sources:
        """A while loop's state after any number of trips: each trip's sources added until
        none is new (the body and condition see every state the loop can be in)."""
        called = [self.module.by_name.get(name) for name in instruction.called_computations[:2]]
        body, condition = [*called, None, None][:2]  # as the parsers keep them
        while True:  # ends: the sources only grow, and there are finitely many
            if condition is not None:
                self.computation(condition, (state,))
            if body is None:
                break
            grown = _merged(state, self.computation(body, (state,)))
            if grown == state:
                break
            state = grown
        return state

    def _defined_at_or_above_zero(self, computation: Computation,
                                  instruction: Instruction) -> bool:
        if instruction.opcode in DEFINED_AT_OR_ABOVE_ZERO:
            return True
        return (instruction.opcode == "power"
                and fractional_exponent(computation.by_name.get, instruction))


def _merged(a: Sources, b: Sources) -> Sources:
    """Both sources, element by element where both are tuples of one length."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_merged(x, y) for x, y in zip(a, b, strict=True))
    return _flat(a) | _flat(b)


def fractional_exponent(declared: Callable[[str], Instruction | None], power: Instruction
                        ) -> bool:
    """Whether a power's exponent is a constant (through broadcasts, conversions and
    reshapes) with a value that is not an integer: the power is then NaN for a negative
    base. `declared` finds an instruction of the power's computation by name."""
    exponent = declared(power.operands[1]) if len(power.operands) > 1 else None
    while exponent is not None and exponent.opcode in ("broadcast", "convert", "reshape"):
        exponent = declared(exponent.operands[0])
    if exponent is None or exponent.opcode != "constant" or exponent.literal is None:
        return False
    values = np.asarray(exponent.literal, dtype=np.float64)
    return bool(np.any(values != np.round(values)))

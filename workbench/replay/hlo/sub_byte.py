"""Sub-byte integers (s2, s4, u2, u4): one per byte while evaluating, wrapped to their width.

Snapshots hold them as ml_dtypes arrays (int4, uint4, ...), but ml_dtypes' arithmetic is not
XLA's (its shifts do not wrap at the width, its float conversions wrap instead of
saturating), so the evaluator computes on int8/uint8 *storage* and brings every sub-byte
result back into range: two's-complement wraparound, as XLA's integer ops and int-to-int
converts do. The few ops whose answer depends on the bit width get their operands prepared:
logical right shifts and count-leading-zeros see the value's own bits (masked); an
arithmetic right shift of an unsigned value sees them sign-extended; float-to-integer
converts saturate at the type's own bounds. `popcnt` of a signed sub-byte value has no one
answer in XLA (its CPU backend counts s4 over a byte, popcnt(-8) = 5, but s2 over its two
bits; HloEvaluator counts 64 bits): it is unsupported.

The interpreter adapts a handler only when its instruction touches a sub-byte type, so other
programs pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from workbench.hlo_ir import Instruction, LiteralValue, Shape, numpy_dtype
from workbench.replay.errors import Unsupported
from workbench.replay.hlo.dtypes import SUB_BYTE_WIDTHS as WIDTHS
from workbench.replay.hlo.dtypes import dtype_of as storage_dtype
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.registry import Handler, Value

_INT8 = np.dtype(np.int8)
_UINT8 = np.dtype(np.uint8)


@cache
def _external_dtype(element_type: str) -> np.dtype:
    try:
        return np.dtype(numpy_dtype(element_type))
    except (ValueError, ImportError):
        raise Unsupported(f"element type {element_type}") from None


def wrap(x: np.ndarray, element_type: str) -> np.ndarray:
    """The low bits of integers `x` as values of `element_type`, in its storage dtype."""
    bits, signed = WIDTHS[element_type]
    if x.dtype.kind not in "iub":  # an ml_dtypes array (a constant): its values are in range
        return x.astype(storage_dtype(element_type))
    low = x.astype(_UINT8) & np.uint8((1 << bits) - 1)
    if not signed:
        return low
    sign = np.int8(1 << (bits - 1))
    return (low.astype(_INT8) ^ sign) - sign


def _masked(x: np.ndarray, element_type: str) -> np.ndarray:
    """A value's own bits as an unsigned number (for shifts and bit counts)."""
    bits, _ = WIDTHS[element_type]
    return x.astype(_UINT8) & np.uint8((1 << bits) - 1)


def has_sub_byte(shape: Shape) -> bool:
    if shape.is_tuple:
        return any(has_sub_byte(s) for s in shape.tuple_shapes)
    return shape.element_type in WIDTHS


def to_storage(value: LiteralValue, shape: Shape) -> LiteralValue:
    """An argument in the evaluator's representation (ml_dtypes sub-byte arrays to int8)."""
    if shape.is_tuple and isinstance(value, tuple):
        return tuple(to_storage(v, s) for v, s in zip(value, shape.tuple_shapes, strict=True))
    if shape.element_type in WIDTHS and not isinstance(value, tuple):
        array = np.asarray(value)
        if array.dtype == _external_dtype(shape.element_type):
            return array.astype(storage_dtype(shape.element_type))
    return value


def from_storage(value: LiteralValue, shape: Shape) -> LiteralValue:
    """A result as snapshots hold it (int8 storage back to the ml_dtypes type)."""
    if shape.is_tuple and isinstance(value, tuple):
        return tuple(from_storage(v, s) for v, s in zip(value, shape.tuple_shapes, strict=True))
    if shape.element_type in WIDTHS and not isinstance(value, tuple) and value is not None:
        return np.asarray(value).astype(_external_dtype(shape.element_type))
    return value


def _wrap_result(value: Value, shape: Shape) -> Value:
    if shape.is_tuple and isinstance(value, tuple):
        return tuple(_wrap_result(v, s) for v, s in zip(value, shape.tuple_shapes, strict=True))
    if shape.element_type in WIDTHS and not isinstance(value, tuple):
        return wrap(np.asarray(value), shape.element_type)
    return value


def _bounds(element_type: str) -> tuple[int, int]:
    bits, signed = WIDTHS[element_type]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


Prepare = Callable[[list[Value]], list[Value]]


def _operand_preparation(instruction: Instruction) -> Prepare | None:
    """What the op's operands need before the byte-wide handler sees them, if anything."""
    opcode = instruction.opcode
    result_type = instruction.shape.element_type
    if opcode in ("shift-right-logical", "count-leading-zeros") and result_type in WIDTHS:
        return lambda operands: [_masked(np.asarray(x), result_type) for x in operands]
    if opcode == "shift-right-arithmetic" and result_type in WIDTHS and \
            not WIDTHS[result_type][1]:
        signed = result_type.replace("u", "s")
        return lambda operands: [wrap(np.asarray(x), signed) for x in operands]
    if opcode == "convert" and result_type in WIDTHS:
        low, high = _bounds(result_type)

        def saturate(operands: list[Value]) -> list[Value]:
            x = np.asarray(operands[0])
            if kind_of(x.dtype) in ("float", "narrow", "complex"):
                real = np.real(x).astype(np.float64)
                x = np.where(np.isnan(real), real, np.clip(real, low, high))
            return [x]

        return saturate
    return None


def _counting_fix(instruction: Instruction) -> Callable[[Value], Value] | None:
    """count-leading-zeros counted over a byte: the width's share of leading zeros is extra."""
    if instruction.opcode != "count-leading-zeros":
        return None
    extra = 8 - WIDTHS[instruction.shape.element_type][0]
    return lambda value: np.asarray(value) - np.array(extra, np.asarray(value).dtype)


_WIDTH_SENSITIVE = frozenset(("bitcast-convert", "stochastic-convert", "rng-bit-generator"))


def adapt(handler: Handler, instruction: Instruction, operand_shapes: list[Shape]) -> Handler:
    """`handler`, made exact for sub-byte types when `instruction` involves any."""
    result_shape = instruction.shape
    if not has_sub_byte(result_shape) and not any(has_sub_byte(s) for s in operand_shapes):
        return handler
    if instruction.opcode == "popcnt" and WIDTHS.get(result_shape.element_type, (0, False))[1]:
        raise Unsupported(f"popcnt on {result_shape.element_type}")
    if instruction.opcode in _WIDTH_SENSITIVE:
        widths = {s.element_type for s in (result_shape, *operand_shapes) if not s.is_tuple}
        if instruction.opcode != "bitcast-convert" or len(
                {WIDTHS.get(t, (8 * _external_dtype(t).itemsize, True))[0]
                 for t in widths}) != 1:
            raise Unsupported(f"{instruction.opcode} with sub-byte types")
    prepare = _operand_preparation(instruction)
    fix = _counting_fix(instruction) if result_shape.element_type in WIDTHS else None

    def sub_byte_handler(interpreter: Any, instruction: Instruction,
                         operands: list[Value]) -> Value:  # passed through, as a `Handler`
        if prepare is not None:
            operands = prepare(operands)
        value = handler(interpreter, instruction, operands)
        if fix is not None:
            value = fix(value)
        return _wrap_result(value, result_shape)

    return sub_byte_handler

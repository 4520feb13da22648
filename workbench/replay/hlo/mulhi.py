"""`mulhi`: the high half of the full-width product of two integers (XLA's MulHi; what
`lax.mulhi` lowers to), signed or unsigned by the element type.

Up to 32 bits the product fits a 64-bit integer and is shifted. For 64 bits numpy has no
128-bit integer, so the product is assembled from 32-bit halves in wrapping uint64
arithmetic (exact: every partial sum fits), and the signed result corrected from the
unsigned one: hi(a * b) = hi_u(a, b) - (a < 0 ? b : 0) - (b < 0 ? a : 0) (mod 2^64).
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import Unsupported
from workbench.replay.hlo.dtypes import SUB_BYTE_WIDTHS, kind_of
from workbench.replay.hlo.registry import Value, handles

_LOW = np.uint64(0xFFFFFFFF)
_HALF = np.uint64(32)


def _high_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a0, a1 = a & _LOW, a >> _HALF
    b0, b1 = b & _LOW, b >> _HALF
    low_low, low_high, high_low = a0 * b0, a0 * b1, a1 * b0
    middle = (low_low >> _HALF) + (low_high & _LOW) + (high_low & _LOW)
    return a1 * b1 + (low_high >> _HALF) + (high_low >> _HALF) + (middle >> _HALF)


def _mulhi_signed(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = 8 * x.dtype.itemsize
    if width < 64:
        product = x.astype(np.int64) * y.astype(np.int64)
        return (product >> np.int64(width)).astype(x.dtype)
    a, b = x.astype(np.uint64), y.astype(np.uint64)
    high = _high_u64(a, b)
    high = high - np.where(x < 0, b, np.uint64(0)) - np.where(y < 0, a, np.uint64(0))
    return high.astype(np.int64)


def _mulhi_unsigned(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = 8 * x.dtype.itemsize
    if width < 64:
        product = x.astype(np.uint64) * y.astype(np.uint64)
        return (product >> np.uint64(width)).astype(x.dtype)
    return _high_u64(x.astype(np.uint64), y.astype(np.uint64))


@handles("mulhi", elementwise=True)
def mulhi(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    x, y = (np.asarray(v) for v in operands)
    element_type = instruction.shape.element_type
    kind = kind_of(x.dtype)
    if element_type in SUB_BYTE_WIDTHS or kind not in ("signed", "unsigned"):
        raise Unsupported(f"mulhi on {element_type}")
    return _mulhi_signed(x, y) if kind == "signed" else _mulhi_unsigned(x, y)

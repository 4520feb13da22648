"""math on numpy values, elementwise, in the element type of the operands.

numpy computes `f16` and `bf16` functions in f32 and rounds the result, which is what MLIR's
lowerings for those types do too. Two ops have no numpy ufunc: `math.erf` uses Python's
`math.erf` (f64) rounded to the element type, and `math.fma` is computed in f64 for f32 and
narrower types (exact product, one rounding of the sum, then rounding to the type).
"""

from __future__ import annotations

import math as pymath
from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.ir import Operation

from workbench.replay.mlir.interpreters.table import table_functions
from workbench.replay.mlir.values import shaped_result, unsigned_view

_erf = np.vectorize(pymath.erf, otypes=[np.float64])


def _result(op: Operation, value: Any) -> Any:
    return shaped_result(value, op.results[0].type)


def _round_half_away(value: Any) -> Any:
    truncated = np.trunc(value)
    # x - trunc(x) is exact, so the comparison with 0.5 is too.
    away = np.abs(np.subtract(value, truncated)) >= 0.5
    return np.where(away, truncated + np.sign(value), truncated)


def _fma(op: Operation, a: Any, b: Any, c: Any) -> Any:
    dtype = np.asarray(a).dtype
    if dtype.itemsize < 8:
        wide = np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)
        return _result(op, wide)
    return _result(op, np.add(np.multiply(a, b), c))


def _bit_width(value: Any) -> int:
    return np.asarray(value).dtype.itemsize * 8


def _count_leading_zeros(op: Operation, value: Any) -> Any:
    bits = _bit_width(value)
    unsigned = np.asarray(unsigned_view(value)).astype(np.uint64)
    count = np.full(unsigned.shape, bits, dtype=np.int64)
    for position in range(bits):
        set_here = (unsigned >> np.uint64(position)) & np.uint64(1) == 1
        count = np.where(set_here, bits - 1 - position, count)
    return _result(op, count)


def _count_trailing_zeros(op: Operation, value: Any) -> Any:
    bits = _bit_width(value)
    unsigned = np.asarray(unsigned_view(value)).astype(np.uint64)
    count = np.full(unsigned.shape, bits, dtype=np.int64)
    for position in reversed(range(bits)):
        set_here = (unsigned >> np.uint64(position)) & np.uint64(1) == 1
        count = np.where(set_here, position, count)
    return _result(op, count)


def _ipowi(op: Operation, base: Any, exponent: Any) -> Any:
    base = np.asarray(base)
    exponent = np.asarray(exponent)
    result = np.ones(np.broadcast(base, exponent).shape, dtype=base.dtype)
    power = np.broadcast_to(base, result.shape).copy()
    remaining = np.broadcast_to(np.abs(exponent), result.shape).astype(np.uint64)
    while np.any(remaining):
        odd = (remaining & np.uint64(1)) == 1
        result = np.where(odd, result * power, result)
        power = power * power
        remaining = remaining >> np.uint64(1)
    negative = np.broadcast_to(exponent < 0, result.shape)
    # A negative exponent gives 1/base**n: 0 unless base is 1 (1) or -1 (+-1).
    signed_one = np.where(np.abs(exponent) % 2 == 1, base, np.ones_like(base))
    inverse = np.where(np.abs(base) == 1, signed_one, 0)
    return _result(op, np.where(negative, inverse, result))


TABLE = {
    math.AbsFOp: lambda op, a: np.abs(a),
    math.AbsIOp: lambda op, a: _result(op, np.abs(a)),
    math.AcosOp: lambda op, a: np.arccos(a),
    math.AcoshOp: lambda op, a: np.arccosh(a),
    math.AsinOp: lambda op, a: np.arcsin(a),
    math.AsinhOp: lambda op, a: np.arcsinh(a),
    math.AtanOp: lambda op, a: np.arctan(a),
    math.AtanhOp: lambda op, a: np.arctanh(a),
    math.Atan2Op: lambda op, a, b: np.arctan2(a, b),
    math.CbrtOp: lambda op, a: _result(op, np.cbrt(a)),
    math.CeilOp: lambda op, a: np.ceil(a),
    math.CopySignOp: lambda op, a, b: np.copysign(a, b),
    math.CosOp: lambda op, a: np.cos(a),
    math.CoshOp: lambda op, a: np.cosh(a),
    math.CountLeadingZerosOp: _count_leading_zeros,
    math.CountTrailingZerosOp: _count_trailing_zeros,
    math.CtPopOp: lambda op, a: _result(op, np.bitwise_count(unsigned_view(a))),
    math.ErfOp: lambda op, a: _result(op, _erf(np.asarray(a, np.float64))),
    math.ExpOp: lambda op, a: np.exp(a),
    math.Exp2Op: lambda op, a: np.exp2(a),
    math.ExpM1Op: lambda op, a: np.expm1(a),
    math.FloorOp: lambda op, a: np.floor(a),
    math.FmaOp: _fma,
    math.FPowIOp: lambda op, a, b: _result(op, np.power(a, np.asarray(b, np.float64))),
    math.IPowIOp: _ipowi,
    math.LogOp: lambda op, a: np.log(a),
    math.Log10Op: lambda op, a: np.log10(a),
    math.Log1pOp: lambda op, a: np.log1p(a),
    math.Log2Op: lambda op, a: np.log2(a),
    math.PowFOp: lambda op, a, b: np.power(a, b),
    math.RoundOp: lambda op, a: _result(op, _round_half_away(a)),
    math.RoundEvenOp: lambda op, a: np.rint(a),
    math.RsqrtOp: lambda op, a: _result(op, np.reciprocal(np.sqrt(a))),
    math.SinOp: lambda op, a: np.sin(a),
    math.SinhOp: lambda op, a: np.sinh(a),
    math.SqrtOp: lambda op, a: np.sqrt(a),
    math.TanOp: lambda op, a: np.tan(a),
    math.TanhOp: lambda op, a: np.tanh(a),
    math.TruncOp: lambda op, a: np.trunc(a),
}

MathFunctions = table_functions("MathFunctions", TABLE)

"""arith on numpy values: scalars, and tensors/vectors elementwise.

Semantics follow the arith dialect documentation:
- integers are signless; ops that read them as unsigned (`divui`, `cmpi ult`, `extui`, ...)
  reinterpret the bits; `i1` true is -1 when read as signed (`extsi`, `sitofp`, `cmpi slt`);
- integer overflow wraps;
- division by zero and signed `INT_MIN / -1` are undefined behaviour: they raise
  `EvaluationError` rather than produce a number;
- results that are *poison* (shifts by at least the bit width, out-of-range `fptosi`) are
  given a fixed value (0 for shifts; for float-to-int conversions the saturated value, NaN
  as 0, as XLA does). Any value refines poison, and lowered code routinely computes poison
  in lanes it then discards with `arith.select`, so raising there would reject correct code;
- `maximumf`/`minimumf` propagate NaN and order -0.0 below +0.0; `maxnumf`/`minnumf` return
  the non-NaN operand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.table import table_functions
from workbench.replay.mlir.values import (
    shaped_result,
    unsigned_view,
    value_dtype,
)


def _result(op: Operation, value: Any) -> Any:
    return shaped_result(value, op.results[0].type)


def _bits(value: Any) -> int:
    dtype = np.asarray(value).dtype
    return 1 if dtype == np.bool_ else dtype.itemsize * 8


def _as_signed(value: Any) -> Any:
    """`i1` read as a signed number: true is -1."""
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return -array.astype(np.int8)
    return value


def _as_unsigned(value: Any) -> Any:
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return array.astype(np.uint8)
    return unsigned_view(value)


def _same_type(result: Any, like: Any) -> Any:
    """Reinterpret `result` (computed unsigned) as the operand's dtype."""
    dtype = np.asarray(like).dtype
    array = np.asarray(result)
    if dtype == np.bool_:
        out = array.astype(np.bool_)
    elif array.dtype.itemsize == dtype.itemsize:
        out = array.view(dtype)
    else:
        out = array.astype(dtype)
    return out if out.ndim else out[()]


def _check_divisor(op: Operation, divisor: Any) -> None:
    if np.any(np.asarray(divisor) == 0):
        raise EvaluationError(f"{op.name}: division by zero (undefined behaviour)")


def _check_signed_overflow(op: Operation, lhs: Any, rhs: Any) -> None:
    dtype = np.asarray(lhs).dtype
    if dtype.kind != "i":
        return
    smallest = np.iinfo(dtype).min
    if np.any((np.asarray(lhs) == smallest) & (np.asarray(rhs) == -1)):
        raise EvaluationError(f"{op.name}: signed overflow INT_MIN / -1 (undefined behaviour)")


def _divsi(op: Operation, lhs: Any, rhs: Any) -> Any:
    lhs, rhs = _as_signed(lhs), _as_signed(rhs)
    _check_divisor(op, rhs)
    _check_signed_overflow(op, lhs, rhs)
    quotient = np.floor_divide(lhs, rhs)
    # C division truncates toward zero: correct floor division where the signs differ.
    adjust = (np.remainder(lhs, rhs) != 0) & ((np.asarray(lhs) < 0) != (np.asarray(rhs) < 0))
    return _result(op, quotient + adjust)


def _remsi(op: Operation, lhs: Any, rhs: Any) -> Any:
    lhs, rhs = _as_signed(lhs), _as_signed(rhs)
    _check_divisor(op, rhs)
    safe = np.where(np.asarray(rhs) == -1, 1, rhs).astype(np.asarray(rhs).dtype)
    return _result(op, np.fmod(lhs, safe))


def _ceildivsi(op: Operation, lhs: Any, rhs: Any) -> Any:
    lhs, rhs = _as_signed(lhs), _as_signed(rhs)
    _check_divisor(op, rhs)
    _check_signed_overflow(op, lhs, rhs)
    return _result(op, np.floor_divide(lhs, rhs) + (np.remainder(lhs, rhs) != 0))


def _floordivsi(op: Operation, lhs: Any, rhs: Any) -> Any:
    lhs, rhs = _as_signed(lhs), _as_signed(rhs)
    _check_divisor(op, rhs)
    _check_signed_overflow(op, lhs, rhs)
    return _result(op, np.floor_divide(lhs, rhs))


def _unsigned_binary(function: Any, check_zero: bool = False) -> Any:
    def run(op: Operation, lhs: Any, rhs: Any) -> Any:
        a, b = _as_unsigned(lhs), _as_unsigned(rhs)
        if check_zero:
            _check_divisor(op, b)
        return _result(op, _same_type(function(a, b), lhs))

    return run


def _ceildivui(a: Any, b: Any) -> Any:
    return np.floor_divide(a, b) + (np.remainder(a, b) != 0)


def _shift(kind: str) -> Any:
    def run(op: Operation, value: Any, amount: Any) -> Any:
        bits = _bits(value)
        count = np.asarray(_as_unsigned(amount)).astype(np.uint64)
        in_range = count < bits
        safe = np.where(in_range, count, 0).astype(np.asarray(value).dtype)
        if kind == "shli":
            shifted = _same_type(np.left_shift(_as_unsigned(value), _as_unsigned(safe)), value)
        elif kind == "shrui":
            shifted = _same_type(np.right_shift(_as_unsigned(value), _as_unsigned(safe)), value)
        else:
            shifted = np.right_shift(_as_signed(value), safe)
        # Shifting by the bit width or more is poison: give 0.
        return _result(op, np.where(in_range, shifted, 0))

    return run


def _float_max(a: Any, b: Any) -> Any:
    result = np.maximum(a, b)
    both_zero = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    return np.where(both_zero, np.where(np.signbit(a), b, a), result)


def _float_min(a: Any, b: Any) -> Any:
    result = np.minimum(a, b)
    both_zero = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    return np.where(both_zero, np.where(np.signbit(a), a, b), result)


def _float_maxnum(a: Any, b: Any) -> Any:
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, _float_max(a, b)))


def _float_minnum(a: Any, b: Any) -> Any:
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, _float_min(a, b)))


def _cmpf(op: arith.CmpfOp, a: Any, b: Any) -> Any:
    predicate = op.predicate.value.data
    ordered = ~(np.isnan(a) | np.isnan(b))
    match predicate:
        case 0:
            result = np.zeros(np.broadcast(a, b).shape, dtype=np.bool_)
        case 1:
            result = np.equal(a, b)
        case 2:
            result = np.greater(a, b)
        case 3:
            result = np.greater_equal(a, b)
        case 4:
            result = np.less(a, b)
        case 5:
            result = np.less_equal(a, b)
        case 6:
            result = np.not_equal(a, b) & ordered
        case 7:
            result = ordered
        case 8:
            result = np.equal(a, b) | ~ordered
        case 9:
            result = ~np.less_equal(a, b)
        case 10:
            result = ~np.less(a, b)
        case 11:
            result = ~np.greater_equal(a, b)
        case 12:
            result = ~np.greater(a, b)
        case 13:
            result = np.not_equal(a, b)
        case 14:
            result = ~ordered
        case _:
            result = np.ones(np.broadcast(a, b).shape, dtype=np.bool_)
    return _result(op, result)


def _cmpi(op: arith.CmpiOp, a: Any, b: Any) -> Any:
    predicate = op.predicate.value.data
    if predicate in (0, 1):
        result = np.equal(a, b) if predicate == 0 else np.not_equal(a, b)
        return _result(op, result)
    if predicate >= 6:
        a, b = _as_unsigned(a), _as_unsigned(b)
    else:
        a, b = _as_signed(a), _as_signed(b)
    compare = {
        2: np.less,
        3: np.less_equal,
        4: np.greater,
        5: np.greater_equal,
        6: np.less,
        7: np.less_equal,
        8: np.greater,
        9: np.greater_equal,
    }[predicate]
    return _result(op, compare(a, b))


def _select(op: Operation, condition: Any, on_true: Any, on_false: Any) -> Any:
    return _result(op, np.where(condition, on_true, on_false))


def _extsi(op: Operation, value: Any) -> Any:
    return _result(op, _as_signed(value))


def _extui(op: Operation, value: Any) -> Any:
    return _result(op, _as_unsigned(value))


def _trunci(op: Operation, value: Any) -> Any:
    target = value_dtype(op.results[0].type)
    if target == np.bool_:
        return _result(op, (np.asarray(value) & 1).astype(np.bool_))
    return _result(op, np.asarray(value).astype(target))


def _float_to_int(op: Operation, value: Any, unsigned: bool) -> Any:
    target = value_dtype(op.results[0].type)
    if target == np.bool_:
        return _result(op, np.asarray(value) != 0)
    info = np.iinfo(np.dtype(f"u{target.itemsize}") if unsigned else target)
    array = np.nan_to_num(np.asarray(value, dtype=np.float64), nan=0.0)
    clipped = np.clip(np.trunc(array), float(info.min), float(info.max))
    # float(info.max) may round up past the range (2**63 for int64): keep it in range.
    converted = np.where(clipped >= float(info.max), info.max, clipped.astype(info.dtype))
    return _result(op, np.asarray(converted, dtype=info.dtype).view(target))


def _index_cast(op: Operation, value: Any) -> Any:
    target = value_dtype(op.results[0].type)
    if target == np.bool_:
        return _result(op, (np.asarray(value) & 1).astype(np.bool_))
    return _result(op, np.asarray(_as_signed(value)).astype(target))


def _bitcast(op: Operation, value: Any) -> Any:
    target = value_dtype(op.results[0].type)
    array = np.asarray(value)
    if array.dtype == target:
        return value
    if array.dtype == np.bool_ or target == np.bool_:
        return _result(op, array.astype(target))
    viewed = array.view(target)
    return _result(op, viewed)


@register_impls
class _ArithConstantFunctions(InterpreterFunctions):
    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: ReplayInterpreter, op: arith.ConstantOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (interpreter.constant(op, op.value, op.result.type),)


TABLE = {
    arith.AddfOp: lambda op, a, b: np.add(a, b),
    arith.SubfOp: lambda op, a, b: np.subtract(a, b),
    arith.MulfOp: lambda op, a, b: np.multiply(a, b),
    arith.DivfOp: lambda op, a, b: np.divide(a, b),
    arith.NegfOp: lambda op, a: np.negative(a),
    arith.MaximumfOp: lambda op, a, b: _result(op, _float_max(a, b)),
    arith.MinimumfOp: lambda op, a, b: _result(op, _float_min(a, b)),
    arith.MaxnumfOp: lambda op, a, b: _result(op, _float_maxnum(a, b)),
    arith.MinnumfOp: lambda op, a, b: _result(op, _float_minnum(a, b)),
    arith.AddiOp: lambda op, a, b: _result(op, np.add(a, b)),
    arith.SubiOp: lambda op, a, b: _result(op, np.subtract(a, b)),
    arith.MuliOp: lambda op, a, b: _result(op, np.multiply(a, b)),
    arith.AndIOp: lambda op, a, b: _result(op, np.bitwise_and(a, b)),
    arith.OrIOp: lambda op, a, b: _result(op, np.bitwise_or(a, b)),
    arith.XOrIOp: lambda op, a, b: _result(op, np.bitwise_xor(a, b)),
    arith.MaxSIOp: lambda op, a, b: _result(op, np.maximum(_as_signed(a), _as_signed(b))),
    arith.MinSIOp: lambda op, a, b: _result(op, np.minimum(_as_signed(a), _as_signed(b))),
    arith.MaxUIOp: _unsigned_binary(np.maximum),
    arith.MinUIOp: _unsigned_binary(np.minimum),
    arith.DivSIOp: _divsi,
    arith.RemSIOp: _remsi,
    arith.CeilDivSIOp: _ceildivsi,
    arith.FloorDivSIOp: _floordivsi,
    arith.DivUIOp: _unsigned_binary(np.floor_divide, check_zero=True),
    arith.RemUIOp: _unsigned_binary(np.remainder, check_zero=True),
    arith.CeilDivUIOp: _unsigned_binary(_ceildivui, check_zero=True),
    arith.ShLIOp: _shift("shli"),
    arith.ShRSIOp: _shift("shrsi"),
    arith.ShRUIOp: _shift("shrui"),
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: _select,
    arith.ExtFOp: lambda op, a: _result(op, a),
    arith.TruncFOp: lambda op, a: _result(op, a),
    arith.ExtSIOp: _extsi,
    arith.ExtUIOp: _extui,
    arith.TruncIOp: _trunci,
    arith.SIToFPOp: lambda op, a: _result(op, _as_signed(a)),
    arith.UIToFPOp: lambda op, a: _result(op, _as_unsigned(a)),
    arith.FPToSIOp: lambda op, a: _float_to_int(op, a, unsigned=False),
    arith.FPToUIOp: lambda op, a: _float_to_int(op, a, unsigned=True),
    arith.IndexCastOp: _index_cast,
    arith.BitcastOp: _bitcast,
}

ArithFunctions = table_functions("ArithFunctions", TABLE, base=_ArithConstantFunctions)

"""StableHLO on numpy arrays: elementwise ops as table entries, shape ops, dot, while.

Semantics follow the StableHLO specification; where it leaves a result implementation-defined,
the replay does what XLA does, since the IR came from (or goes to) XLA:
- integer division by zero gives -1 (all bits set), remainder by zero gives the dividend, and
  `INT_MIN / -1` gives `INT_MIN` (remainder 0);
- shifts by the bit width or more give 0 (`shift_right_arithmetic`: the sign fill);
- float-to-integer `convert` truncates toward zero and saturates, NaN converts to 0;
- `maximum`/`minimum` propagate NaN; `compare` with `TOTALORDER` orders
  -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN.
Reductions, sorting and indexing ops live in `stablehlo_reduce` and `stablehlo_indexing`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import (
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation

from workbench.replay.deadline import check_loop
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.mlir.dialects import stablehlo
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.arith import _float_max, _float_min
from workbench.replay.mlir.interpreters.math import _count_leading_zeros, _ipowi, _round_half_away
from workbench.replay.mlir.interpreters.stablehlo_attrs import (
    dimension_numbers,
    enum,
    int_list,
    int_value,
)
from workbench.replay.mlir.interpreters.stablehlo_indexing import IndexingFunctions
from workbench.replay.mlir.interpreters.stablehlo_reduce import ReduceFunctions, total_order_key
from workbench.replay.mlir.interpreters.table import table_functions
from workbench.replay.mlir.values import (
    shaped_result,
    static_shape,
    unsigned_view,
    value_dtype,
)


def _result(op: Operation, value: Any) -> np.ndarray:
    return shaped_result(value, op.results[0].type)


def _is_float(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "fcV"


def _is_bool(value: Any) -> bool:
    return np.asarray(value).dtype == np.bool_


def _integer_divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs), np.asarray(rhs))
    zero = rhs == 0
    overflow = np.zeros_like(zero)
    if lhs.dtype.kind == "i":
        overflow = (lhs == np.iinfo(lhs.dtype).min) & (rhs == -1)
    safe = np.where(zero | overflow, 1, rhs).astype(rhs.dtype)
    quotient = np.floor_divide(lhs, safe)
    if lhs.dtype.kind == "i":
        quotient = quotient + ((np.remainder(lhs, safe) != 0) & ((lhs < 0) != (safe < 0)))
    # -1 with all bits set: the largest value for unsigned types.
    quotient = np.where(zero, np.array(-1).astype(lhs.dtype), quotient)
    return np.where(overflow, lhs, quotient).astype(lhs.dtype)


def _integer_remainder(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs), np.asarray(rhs))
    zero = rhs == 0
    overflow = np.zeros_like(zero)
    if lhs.dtype.kind == "i":
        overflow = (lhs == np.iinfo(lhs.dtype).min) & (rhs == -1)
    safe = np.where(zero | overflow, 1, rhs).astype(rhs.dtype)
    remainder = np.fmod(lhs, safe)
    remainder = np.where(zero, lhs, remainder)
    return np.where(overflow, 0, remainder).astype(lhs.dtype)


def _divide(op: Operation, lhs: Any, rhs: Any) -> Any:
    if _is_float(lhs):
        return _result(op, np.divide(lhs, rhs))
    return _result(op, _integer_divide(lhs, rhs))


def _remainder(op: Operation, lhs: Any, rhs: Any) -> Any:
    if _is_float(lhs):
        return _result(op, np.fmod(lhs, rhs))
    return _result(op, _integer_remainder(lhs, rhs))


def _maximum(op: Operation, lhs: Any, rhs: Any) -> Any:
    if _is_float(lhs):
        return _result(op, _float_max(lhs, rhs))
    return _result(op, np.maximum(lhs, rhs))


def _minimum(op: Operation, lhs: Any, rhs: Any) -> Any:
    if _is_float(lhs):
        return _result(op, _float_min(lhs, rhs))
    return _result(op, np.minimum(lhs, rhs))


def _power(op: Operation, lhs: Any, rhs: Any) -> Any:
    if _is_float(lhs):
        return _result(op, np.power(lhs, rhs))
    return _ipowi(op, lhs, rhs)


def _shift(kind: str) -> Any:
    def run(op: Operation, value: Any, amount: Any) -> Any:
        value = np.asarray(value)
        bits = value.dtype.itemsize * 8
        count = np.asarray(unsigned_view(np.asarray(amount, dtype=value.dtype))).astype(np.uint64)
        in_range = count < bits
        safe = np.where(in_range, count, 0).astype(value.dtype)
        if kind == "left":
            shifted = np.left_shift(value, safe)
            overflow: Any = 0
        elif kind == "logical":
            unsigned = unsigned_view(value)
            shifted = np.right_shift(unsigned, unsigned_view(safe)).view(value.dtype)
            overflow = 0
        else:
            signed_dtype = np.dtype(f"i{value.dtype.itemsize}")
            signed = value.view(signed_dtype)
            shifted = np.right_shift(signed, safe.view(signed_dtype)).view(value.dtype)
            overflow = np.where(signed < 0, -1, 0).astype(signed_dtype).view(value.dtype)
        return _result(op, np.where(in_range, shifted, overflow))

    return run


def _not(op: Operation, value: Any) -> Any:
    if _is_bool(value):
        return _result(op, np.logical_not(value))
    return _result(op, np.invert(value))


def _sign(op: Operation, value: Any) -> Any:
    array = np.asarray(value)
    if array.dtype.kind == "c":
        magnitude = np.abs(array)
        return _result(
            op, np.where(magnitude == 0, 0, array / np.where(magnitude == 0, 1, magnitude))
        )
    if array.dtype.kind in "fV":
        # sign(+-0.0) keeps the zero's sign; sign(NaN) is NaN.
        return _result(op, np.where(array == 0, array, np.sign(array)))
    return _result(op, np.sign(array))


def _logistic(op: Operation, value: Any) -> Any:
    one = np.ones((), dtype=np.asarray(value).dtype)
    return _result(op, one / (one + np.exp(np.negative(value))))


def convert_values(value: Any, target: np.dtype) -> np.ndarray:
    """`stablehlo.convert` from any element type to `target`."""
    array = np.asarray(value)
    if target == np.bool_:
        return array != 0
    if array.dtype.kind == "c" and target.kind != "c":
        array = array.real
    if target.kind in "iu" and array.dtype.kind in "fV":
        info = np.iinfo(target)
        wide = np.nan_to_num(np.trunc(array.astype(np.float64)), nan=0.0)
        clipped = np.clip(wide, float(info.min), float(info.max))
        return np.where(clipped >= float(info.max), info.max, clipped.astype(target)).astype(target)
    return array.astype(target)


def _convert(op: Operation, value: Any) -> Any:
    return _result(op, convert_values(value, value_dtype(op.results[0].type)))


def _bitcast_convert(op: Operation, value: Any) -> Any:
    result_type = op.results[0].type
    target = value_dtype(result_type)
    array = np.ascontiguousarray(value)
    return np.reshape(array.view(target), static_shape(result_type))


_COMPARISONS = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "GE": np.greater_equal,
    "GT": np.greater,
    "LE": np.less_equal,
    "LT": np.less,
}


def compare_values(direction: str, kind: str | None, lhs: Any, rhs: Any) -> np.ndarray:
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if kind is None:
        kind = "FLOAT" if _is_float(lhs) else "UNSIGNED" if lhs.dtype.kind in "ub" else "SIGNED"
    if kind == "TOTALORDER":
        lhs, rhs = total_order_key(lhs), total_order_key(rhs)
    elif kind == "UNSIGNED" and lhs.dtype.kind == "i":
        lhs, rhs = unsigned_view(lhs), unsigned_view(rhs)
    elif kind == "SIGNED" and lhs.dtype.kind == "u":
        signed = np.dtype(f"i{lhs.dtype.itemsize}")
        lhs, rhs = lhs.view(signed), rhs.view(signed)
    return _COMPARISONS[direction](lhs, rhs)


def _compare(op: Operation, lhs: Any, rhs: Any) -> Any:
    direction = enum(op, "comparison_direction")
    if direction not in _COMPARISONS:
        raise Unsupported(f"stablehlo.compare direction {direction}")
    return _result(op, compare_values(direction, enum(op, "compare_type"), lhs, rhs))


def _select(op: Operation, predicate: Any, on_true: Any, on_false: Any) -> Any:
    return _result(op, np.where(predicate, on_true, on_false))


def _clamp(op: Operation, low: Any, value: Any, high: Any) -> Any:
    return _minimum(op, _maximum(op, value, low), high)


def _broadcast_in_dim(op: Operation, value: Any) -> Any:
    result_shape = static_shape(op.results[0].type)
    dims = int_list(op, "broadcast_dimensions")
    array = np.asarray(value)
    order = sorted(range(len(dims)), key=lambda axis: dims[axis])
    array = np.transpose(array, order) if order != list(range(len(dims))) else array
    shape = [1] * len(result_shape)
    for axis in order:
        shape[dims[axis]] = np.shape(value)[axis]
    return _result(op, np.broadcast_to(np.reshape(array, shape), result_shape))


def _iota(op: Operation) -> Any:
    result_type = op.results[0].type
    shape = static_shape(result_type)
    dimension = int_value(op, "iota_dimension")
    line = np.arange(shape[dimension]).astype(value_dtype(result_type))
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(view), shape)


def _slice(op: Operation, value: Any) -> Any:
    starts = int_list(op, "start_indices")
    limits = int_list(op, "limit_indices")
    strides = int_list(op, "strides", [1] * len(starts))
    return _result(op, np.asarray(value)[tuple(map(slice, starts, limits, strides))])


def _pad(op: Operation, value: Any, padding: Any) -> Any:
    array = np.asarray(value)
    low = int_list(op, "edge_padding_low")
    high = int_list(op, "edge_padding_high")
    interior = int_list(op, "interior_padding")
    spread_shape = tuple(
        size + max(size - 1, 0) * gap for size, gap in zip(array.shape, interior, strict=True)
    )
    full_shape = tuple(
        size + max(lo, 0) + max(hi, 0) for size, lo, hi in zip(spread_shape, low, high, strict=True)
    )
    result = np.full(full_shape, padding, dtype=array.dtype)
    placed = tuple(
        slice(max(lo, 0), max(lo, 0) + size, gap + 1)
        for lo, size, gap in zip(low, spread_shape, interior, strict=True)
    )
    result[placed] = array
    # Negative edge padding removes elements.
    cropped = tuple(
        slice(-min(lo, 0), full - (-min(hi, 0)))
        for lo, hi, full in zip(low, high, full_shape, strict=True)
    )
    return _result(op, result[cropped])


def _dot_general_values(
    lhs: np.ndarray, rhs: np.ndarray, numbers: dict[str, Any], dtype: np.dtype
) -> np.ndarray:
    lhs_batch = numbers.get("lhs_batching_dimensions", [])
    rhs_batch = numbers.get("rhs_batching_dimensions", [])
    lhs_contract = numbers.get("lhs_contracting_dimensions", [])
    rhs_contract = numbers.get("rhs_contracting_dimensions", [])
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_batch and d not in lhs_contract]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_batch and d not in rhs_contract]
    batch_shape = [lhs.shape[d] for d in lhs_batch]
    lhs_free_shape = [lhs.shape[d] for d in lhs_free]
    rhs_free_shape = [rhs.shape[d] for d in rhs_free]
    contract_size = int(np.prod([lhs.shape[d] for d in lhs_contract], dtype=np.int64))
    batch_size = int(np.prod(batch_shape, dtype=np.int64))
    left = np.transpose(convert_values(lhs, dtype), lhs_batch + lhs_free + lhs_contract).reshape(
        batch_size, int(np.prod(lhs_free_shape, dtype=np.int64)), contract_size
    )
    right = np.transpose(convert_values(rhs, dtype), rhs_batch + rhs_contract + rhs_free).reshape(
        batch_size, contract_size, int(np.prod(rhs_free_shape, dtype=np.int64))
    )
    if dtype == np.bool_:
        product = np.matmul(left.astype(np.uint8), right.astype(np.uint8)) != 0
    else:
        product = np.matmul(left, right)
    return product.reshape(batch_shape + lhs_free_shape + rhs_free_shape)


def _dot_general(op: Operation, lhs: Any, rhs: Any) -> Any:
    numbers = dimension_numbers(op, "dot_dimension_numbers")
    dtype = value_dtype(op.results[0].type)
    return _result(op, _dot_general_values(np.asarray(lhs), np.asarray(rhs), numbers, dtype))


def _dot(op: Operation, lhs: Any, rhs: Any) -> Any:
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    numbers = {"lhs_contracting_dimensions": [lhs.ndim - 1], "rhs_contracting_dimensions": [0]}
    dtype = value_dtype(op.results[0].type)
    return _result(op, _dot_general_values(lhs, rhs, numbers, dtype))


def _reverse(op: Operation, value: Any) -> Any:
    return _result(op, np.flip(value, axis=tuple(int_list(op, "dimensions"))))


def _concatenate(op: Operation, *values: Any) -> Any:
    return _result(op, np.concatenate(values, axis=int_value(op, "dimension")))


def _clamped_starts(shape: tuple[int, ...], sizes: list[int], starts: tuple[Any, ...]) -> list[int]:
    return [
        int(min(max(int(np.asarray(start)), 0), dim - size))
        for start, dim, size in zip(starts, shape, sizes, strict=True)
    ]


def _dynamic_slice(op: Operation, value: Any, *starts: Any) -> Any:
    array = np.asarray(value)
    sizes = int_list(op, "slice_sizes")
    begin = _clamped_starts(array.shape, sizes, starts)
    return _result(op, array[tuple(slice(b, b + s) for b, s in zip(begin, sizes, strict=True))])


def _dynamic_update_slice(op: Operation, value: Any, update: Any, *starts: Any) -> Any:
    result = np.array(value, copy=True)
    update = np.asarray(update)
    begin = _clamped_starts(result.shape, list(update.shape), starts)
    result[tuple(slice(b, b + s) for b, s in zip(begin, update.shape, strict=True))] = update
    return _result(op, result)


def _unary(function: Any) -> Any:
    return lambda op, value: _result(op, function(value))


def _binary(function: Any) -> Any:
    return lambda op, lhs, rhs: _result(op, function(lhs, rhs))


TABLE = {
    stablehlo.AbsOp: _unary(np.abs),
    stablehlo.CbrtOp: _unary(np.cbrt),
    stablehlo.CeilOp: _unary(np.ceil),
    stablehlo.ConvertOp: _convert,
    stablehlo.BitcastConvertOp: _bitcast_convert,
    stablehlo.ReshapeOp: lambda op, value: _result(
        op, np.reshape(value, tuple(op.results[0].type.get_shape()))
    ),
    stablehlo.CosineOp: _unary(np.cos),
    stablehlo.CountLeadingZerosOp: _count_leading_zeros,
    stablehlo.ExpOp: _unary(np.exp),
    stablehlo.Expm1Op: _unary(np.expm1),
    stablehlo.FloorOp: _unary(np.floor),
    stablehlo.ImagOp: _unary(np.imag),
    stablehlo.IsFiniteOp: _unary(np.isfinite),
    stablehlo.LogOp: _unary(np.log),
    stablehlo.Log1pOp: _unary(np.log1p),
    stablehlo.LogisticOp: _logistic,
    stablehlo.NegOp: _unary(np.negative),
    stablehlo.NotOp: _not,
    stablehlo.PopcntOp: _unary(lambda value: np.bitwise_count(unsigned_view(value))),
    stablehlo.RealOp: _unary(np.real),
    stablehlo.RoundAfzOp: _unary(_round_half_away),
    stablehlo.RoundEvenOp: _unary(np.rint),
    stablehlo.RsqrtOp: _unary(lambda value: np.reciprocal(np.sqrt(value))),
    stablehlo.SignOp: _sign,
    stablehlo.SineOp: _unary(np.sin),
    stablehlo.SqrtOp: _unary(np.sqrt),
    stablehlo.TanOp: _unary(np.tan),
    stablehlo.TanhOp: _unary(np.tanh),
    stablehlo.AddOp: _binary(np.add),
    stablehlo.SubtractOp: _binary(np.subtract),
    stablehlo.MultiplyOp: _binary(np.multiply),
    stablehlo.DivideOp: _divide,
    stablehlo.RemainderOp: _remainder,
    stablehlo.MaxOp: _maximum,
    stablehlo.MinOp: _minimum,
    stablehlo.PowerOp: _power,
    stablehlo.AndOp: _binary(np.bitwise_and),
    stablehlo.OrOp: _binary(np.bitwise_or),
    stablehlo.XorOp: _binary(np.bitwise_xor),
    stablehlo.ShiftLeftOp: _shift("left"),
    stablehlo.ShiftRightArithmeticOp: _shift("arithmetic"),
    stablehlo.ShiftRightLogicalOp: _shift("logical"),
    stablehlo.Atan2Op: _binary(np.arctan2),
    stablehlo.CompareOp: _compare,
    stablehlo.SelectOp: _select,
    stablehlo.ClampOp: _clamp,
    stablehlo.BroadcastInDimOp: _broadcast_in_dim,
    stablehlo.IotaOp: _iota,
    stablehlo.SliceOp: _slice,
    stablehlo.PadOp: _pad,
    stablehlo.DotGeneralOp: _dot_general,
    stablehlo.DotOp: _dot,
    stablehlo.ReverseOp: _reverse,
    stablehlo.TransposeOp: lambda op, value: _result(
        op, np.transpose(value, int_list(op, "permutation"))
    ),
    stablehlo.ConcatenateOp: _concatenate,
    stablehlo.DynamicSliceOp: _dynamic_slice,
    stablehlo.DynamicUpdateSliceOp: _dynamic_update_slice,
}

# Ops whose result at an index depends only on the operands at that index: a region made of
# them (a reduction body, a comparator) can run on whole arrays at once.
ELEMENTWISE = {
    op_type
    for op_type in TABLE
    if op_type.__base__ is stablehlo._PrettyOp
    and op_type not in (stablehlo.ReshapeOp, stablehlo.BitcastConvertOp)
} | {stablehlo.CompareOp, stablehlo.ReturnOp, stablehlo.ConstantOp}


@register_impls
class _StructuralFunctions(ReduceFunctions, IndexingFunctions):
    @impl(stablehlo.ConstantOp)
    def run_constant(
        self, interpreter: ReplayInterpreter, op: stablehlo.ConstantOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        value = op.properties.get("value") or op.attributes.get("value")
        if value is None:
            raise EvaluationError("stablehlo.constant without a value")
        return (interpreter.constant(op, value, op.results[0].type),)

    @impl_terminator(stablehlo.ReturnOp)
    def run_return(
        self, interpreter: ReplayInterpreter, op: stablehlo.ReturnOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

    @impl(stablehlo.OptimizationBarrierOp)
    def run_optimization_barrier(
        self, interpreter: ReplayInterpreter, op: Operation, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return args

    @impl(stablehlo.WhileOp)
    def run_while(
        self, interpreter: ReplayInterpreter, op: stablehlo.WhileOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        condition, body = op.regions
        values = args
        iterations = 0
        while True:
            (proceed,) = interpreter.run_ssacfg_region(condition, values, "stablehlo.while cond")
            if not bool(np.asarray(proceed)):
                return values
            values = interpreter.run_ssacfg_region(body, values, "stablehlo.while body")
            iterations += 1
            check_loop("stablehlo.while", iterations)


StablehloFunctions = table_functions("StablehloFunctions", TABLE, base=_StructuralFunctions)

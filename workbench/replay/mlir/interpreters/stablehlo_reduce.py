"""StableHLO ops that fold a region over many elements: reduce, reduce_window, sort.

The region (`stablehlo.add` of two scalars, a comparator) is interpreted like any other
region. When it only has elementwise ops, it runs once per reduced position on whole arrays
of accumulators (one per output element), so a reduction over K elements costs K region runs,
not K times the output size. A reduction whose region is a single add/multiply/max/min/and/
or/xor of the accumulator and the element uses numpy's reduce instead; StableHLO leaves the
order of a reduction to the implementation, and numpy's pairwise sum is a valid one.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation, Region

from workbench.replay.errors import Unsupported
from workbench.replay.mlir.dialects import stablehlo
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.stablehlo_attrs import (
    enum,
    int_list,
    int_matrix,
    int_value,
)
from workbench.replay.mlir.interpreters.structured import ELEMENTWISE_OPS

_UFUNCS = {
    stablehlo.AddOp: np.add,
    stablehlo.MultiplyOp: np.multiply,
    stablehlo.MaxOp: np.maximum,
    stablehlo.MinOp: np.minimum,
    stablehlo.AndOp: np.bitwise_and,
    stablehlo.OrOp: np.bitwise_or,
    stablehlo.XorOp: np.bitwise_xor,
}


def _single_ufunc(region: Region) -> Any:
    """The numpy ufunc a region `^bb0(%a, %b): %r = op %a, %b; return %r` stands for."""
    block = region.block
    ops = list(block.ops)
    if len(block.args) != 2 or len(ops) != 2:
        return None
    combine, terminator = ops
    ufunc = _UFUNCS.get(type(combine))
    if ufunc is None or not isinstance(terminator, stablehlo.ReturnOp):
        return None
    if set(combine.operands) != set(block.args) or list(terminator.operands) != [
        combine.results[0]
    ]:
        return None
    return ufunc


def total_order_key(value: np.ndarray) -> np.ndarray:
    """Integers that sort like the floats in IEEE total order
    (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN)."""
    signed = np.dtype(f"i{value.dtype.itemsize}")
    bits = np.ascontiguousarray(value).view(signed)
    return np.where(bits < 0, np.bitwise_xor(bits, np.iinfo(signed).max), bits)


def _is_elementwise(region: Region) -> bool:
    return all(type(op) in ELEMENTWISE_OPS and not op.regions for op in region.walk())


def _run(interpreter: ReplayInterpreter, region: Region, args: list[Any], name: str) -> list[Any]:
    return list(interpreter.run_ssacfg_region(region, tuple(args), name))


def _fold(
    interpreter: ReplayInterpreter,
    region: Region,
    accumulators: list[np.ndarray],
    element_slices: Any,
    name: str,
) -> list[np.ndarray]:
    """Fold each tuple of element arrays (from `element_slices`) into the accumulators."""
    for elements in element_slices:
        accumulators = _run(interpreter, region, [*accumulators, *elements], name)
    return accumulators


@register_impls
class ReduceFunctions(InterpreterFunctions):
    @impl(stablehlo.ReduceOp)
    def run_reduce(
        self, interpreter: ReplayInterpreter, op: stablehlo.ReduceOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        count = len(args) // 2
        inputs = [np.asarray(value) for value in args[:count]]
        inits = [np.asarray(value) for value in args[count:]]
        dims = sorted(int_list(op, "dimensions"))
        region = op.regions[0]
        kept = [axis for axis in range(inputs[0].ndim) if axis not in dims]
        kept_shape = tuple(inputs[0].shape[axis] for axis in kept)
        ufunc = _single_ufunc(region)
        if ufunc is not None and count == 1 and inputs[0].size:
            reduced = ufunc.reduce(inputs[0], axis=tuple(dims), dtype=inputs[0].dtype)
            return (np.asarray(ufunc(inits[0], reduced), dtype=inputs[0].dtype),)
        accumulators = [np.broadcast_to(init, kept_shape).copy() for init in inits]
        moved = [np.moveaxis(value, dims, list(range(len(dims)))) for value in inputs]
        positions = itertools.product(*(range(inputs[0].shape[axis]) for axis in dims))
        if _is_elementwise(region):
            slices = ([value[position] for value in moved] for position in positions)
            results = _fold(interpreter, region, accumulators, slices, "stablehlo.reduce")
            return tuple(np.broadcast_to(result, kept_shape).copy() for result in results)
        results = [np.empty(kept_shape, dtype=value.dtype) for value in inits]
        positions_list = list(positions)
        for out_index in np.ndindex(kept_shape):
            scalars = [init[()] for init in inits]
            for position in positions_list:
                elements = [value[position][out_index] for value in moved]
                scalars = _run(interpreter, region, [*scalars, *elements], "stablehlo.reduce")
            for result, scalar in zip(results, scalars, strict=True):
                result[out_index] = scalar
        return tuple(results)

    @impl(stablehlo.ReduceWindowOp)
    def run_reduce_window(
        self, interpreter: ReplayInterpreter, op: stablehlo.ReduceWindowOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        count = len(args) // 2
        inputs = [np.asarray(value) for value in args[:count]]
        inits = [np.asarray(value) for value in args[count:]]
        rank = inputs[0].ndim
        window = int_list(op, "window_dimensions")
        strides = int_list(op, "window_strides", [1] * rank)
        base_dilations = int_list(op, "base_dilations", [1] * rank)
        window_dilations = int_list(op, "window_dilations", [1] * rank)
        padding = int_matrix(op, "padding")
        if padding is None:
            padding = np.zeros((rank, 2), dtype=np.int64)
        region = op.regions[0]
        if not _is_elementwise(region):
            raise Unsupported("stablehlo.reduce_window with a non-elementwise body")
        padded = [
            _dilate_and_pad(value, init, base_dilations, padding)
            for value, init in zip(inputs, inits, strict=True)
        ]
        shape = padded[0].shape
        out_shape = tuple(
            max((size - (w - 1) * d - 1) // s + 1, 0)
            for size, w, d, s in zip(shape, window, window_dilations, strides, strict=True)
        )
        accumulators = [np.broadcast_to(init, out_shape).copy() for init in inits]
        if 0 in out_shape:
            return tuple(accumulators)

        def window_slices() -> Any:
            for offsets in itertools.product(*(range(w) for w in window)):
                index = tuple(
                    slice(o * d, o * d + (n - 1) * s + 1, s)
                    for o, d, n, s in zip(
                        offsets, window_dilations, out_shape, strides, strict=True
                    )
                )
                yield [value[index] for value in padded]

        results = _fold(interpreter, region, accumulators, window_slices(), "reduce_window")
        return tuple(np.broadcast_to(result, out_shape).copy() for result in results)

    @impl(stablehlo.SortOp)
    def run_sort(
        self, interpreter: ReplayInterpreter, op: stablehlo.SortOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        values = [np.asarray(value) for value in args]
        dimension = int_value(op, "dimension") % max(values[0].ndim, 1)
        region = op.regions[0]
        moved = [np.moveaxis(value, dimension, -1) for value in values]
        order = _simple_sort_order(op, region, moved[0])
        if order is None:
            order = np.empty(moved[0].shape, dtype=np.int64)
            for lane in np.ndindex(moved[0].shape[:-1]):
                order[lane] = _comparator_order(interpreter, region, [v[lane] for v in moved])
        sorted_values = [np.take_along_axis(value, order, axis=-1) for value in moved]
        return tuple(np.moveaxis(value, -1, dimension) for value in sorted_values)


def _dilate_and_pad(
    value: np.ndarray, init: np.ndarray, dilations: list[int], padding: np.ndarray
) -> np.ndarray:
    """Holes of base dilation and edge padding hold the init value; negative padding crops."""
    dilated_shape = tuple(
        max((size - 1) * d + 1, 0) for size, d in zip(value.shape, dilations, strict=True)
    )
    dilated = np.full(dilated_shape, init, dtype=value.dtype)
    dilated[tuple(slice(None, None, d) for d in dilations)] = value
    low = [int(lo) for lo in padding[:, 0]]
    high = [int(hi) for hi in padding[:, 1]]
    full_shape = tuple(
        s + max(lo, 0) + max(hi, 0) for s, lo, hi in zip(dilated_shape, low, high, strict=True)
    )
    padded = np.full(full_shape, init, dtype=value.dtype)
    padded[
        tuple(slice(max(lo, 0), max(lo, 0) + s) for lo, s in zip(low, dilated_shape, strict=True))
    ] = dilated
    return padded[
        tuple(
            slice(-min(lo, 0), n + min(hi, 0))
            for lo, hi, n in zip(low, high, full_shape, strict=True)
        )
    ]


def _simple_sort_order(op: Operation, region: Region, keys: np.ndarray) -> np.ndarray | None:
    """The sort permutation when the comparator is `compare LT|GT %lhs0, %rhs0`: a stable
    argsort of the first operand (stable is a valid order for an unstable sort too)."""
    block = region.block
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[0], stablehlo.CompareOp):
        return None
    compare, terminator = ops
    if list(terminator.operands) != [compare.results[0]]:
        return None
    direction = enum(compare, "comparison_direction")
    kind = enum(compare, "compare_type")
    lhs, rhs = compare.operands
    if (lhs, rhs) != (block.args[0], block.args[1]) or direction not in ("LT", "GT"):
        return None
    if kind == "TOTALORDER":
        keys = total_order_key(keys)
    elif keys.dtype.kind in "fV" and np.isnan(keys.astype(np.float64)).any():
        return None  # NaN makes LT/GT not a strict weak order: use the comparator itself
    if direction == "GT":
        ranks = np.unique(keys, return_inverse=True)[1].reshape(keys.shape)
        return np.argsort(-ranks, axis=-1, kind="stable")
    return np.argsort(keys, axis=-1, kind="stable")


def _comparator_order(
    interpreter: ReplayInterpreter, region: Region, lanes: list[np.ndarray]
) -> list[int]:
    def less(i: int, j: int) -> bool:
        args = [item for lane in lanes for item in (lane[i], lane[j])]
        (result,) = _run(interpreter, region, args, "stablehlo.sort comparator")
        return bool(np.asarray(result))

    def compare(i: int, j: int) -> int:
        if less(i, j):
            return -1
        return 1 if less(j, i) else 0

    return sorted(range(lanes[0].shape[-1]), key=functools.cmp_to_key(compare))

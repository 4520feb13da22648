"""The iteration engine of linalg's structured ops, vectorized where the semantics allow.

A structured op is a loop nest over an iteration space; at each point it reads its inputs and
outputs through affine indexing maps, runs its body on the scalars, and writes the body's
results to the outputs. The reference semantics is that loop nest in lexicographic order
(`_run_elementwise`), which is also how `convert-linalg-to-loops` lowers it.

The vectorized path (`_run_vectorized`) gives the same results, bit for bit, when:
- the body only has elementwise ops (arith, math, `linalg.index`, `linalg.yield`), so running
  it once on arrays equals running it at every point;
- every output map names each parallel dimension exactly once and no reduction dimension, so
  distinct parallel points write distinct output elements;
- no input buffer overlaps an output buffer unless it is the very same view read through the
  same map and there is no reduction (the in-place `ins(%a) outs(%a)` form bufferization
  makes): each point then reads its own element before writing it.
It then loops in Python over the reduction dimensions only, in lexicographic order, and
evaluates the body over all parallel points at once. Each output element therefore sees its
reduction terms in the same order as in the loop nest, and every arithmetic op rounds the
same way: the results are identical, only faster. Anything else takes the elementwise path.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, Region
from xdsl.ir.affine import AffineDimExpr, AffineMap

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter

Body = Region | Callable[..., Sequence[Any]]

# Op types whose implementations are elementwise numpy expressions (filled in by the registry).
ELEMENTWISE_OPS: set[type[Operation]] = {linalg.YieldOp, linalg.IndexOp}


def index_stack(interpreter: ReplayInterpreter) -> list[Sequence[Any]]:
    """The iteration points of the running bodies, innermost last (read by `linalg.index`)."""
    return interpreter.cache.setdefault(("linalg.index",), [])


def _loop_ranges(maps: Sequence[AffineMap], operands: Sequence[Any]) -> list[int]:
    """Each loop's trip count, from the first operand dimension its map names directly."""
    count = maps[0].num_dims
    ranges: list[int | None] = [None] * count
    for indexing_map, operand in zip(maps, operands, strict=True):
        if not isinstance(operand, np.ndarray):
            continue
        for axis, expr in enumerate(indexing_map.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = operand.shape[axis]
    if any(size is None for size in ranges):
        raise EvaluationError("cannot infer the iteration space of a structured op")
    return [int(size) for size in ranges]


def _is_elementwise(body: Body) -> bool:
    if not isinstance(body, Region):
        return True
    return all(type(op) in ELEMENTWISE_OPS and not op.regions for op in body.walk())


def _run_body(interpreter: ReplayInterpreter, body: Body, args: Sequence[Any]) -> Sequence[Any]:
    if isinstance(body, Region):
        return interpreter.run_ssacfg_region(body, tuple(args), "linalg body")
    return body(*args)


def _check_indices(indices: tuple[Any, ...], operand: np.ndarray) -> None:
    for axis, index in enumerate(indices):
        low = np.min(index)
        high = np.max(index)
        if low < 0 or high >= operand.shape[axis]:
            raise EvaluationError(
                f"structured op reads index {int(low) if low < 0 else int(high)} of "
                f"dimension {axis} (size {operand.shape[axis]})"
            )


def run_structured(
    interpreter: ReplayInterpreter,
    maps: Sequence[AffineMap],
    iterators: Sequence[str],
    inputs: Sequence[Any],
    outputs: Sequence[np.ndarray],
    body: Body,
) -> None:
    """Run a structured op, writing into `outputs` (copies of tensors, or memref buffers)."""
    ranges = _loop_ranges(maps, [*inputs, *outputs])
    if 0 in ranges:
        return
    if _can_vectorize(maps, iterators, inputs, outputs, body):
        _run_vectorized(interpreter, maps, iterators, ranges, inputs, outputs, body)
    else:
        _run_elementwise(interpreter, maps, ranges, inputs, outputs, body)


def _can_vectorize(
    maps: Sequence[AffineMap],
    iterators: Sequence[str],
    inputs: Sequence[Any],
    outputs: Sequence[np.ndarray],
    body: Body,
) -> bool:
    if not _is_elementwise(body):
        return False
    parallel = {dim for dim, kind in enumerate(iterators) if kind == "parallel"}
    has_reduction = len(parallel) != len(iterators)
    output_maps = maps[len(inputs) :]
    for output_map in output_maps:
        dims = [expr.position for expr in output_map.results if isinstance(expr, AffineDimExpr)]
        if len(dims) != len(output_map.results) or sorted(dims) != sorted(parallel):
            return False
    for operand, input_map in zip(inputs, maps, strict=False):
        if not isinstance(operand, np.ndarray):
            continue
        for output, output_map in zip(outputs, output_maps, strict=True):
            if np.may_share_memory(operand, output) and (
                has_reduction or input_map != output_map or not _same_view(operand, output)
            ):
                return False
    return True


def _same_view(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether two arrays are the same elements of the same memory, in the same layout."""
    return (
        first.__array_interface__["data"][0] == second.__array_interface__["data"][0]
        and first.shape == second.shape
        and first.strides == second.strides
    )


def _run_vectorized(
    interpreter: ReplayInterpreter,
    maps: Sequence[AffineMap],
    iterators: Sequence[str],
    ranges: Sequence[int],
    inputs: Sequence[Any],
    outputs: Sequence[np.ndarray],
    body: Body,
) -> None:
    parallel = [dim for dim, kind in enumerate(iterators) if kind == "parallel"]
    reduction = [dim for dim, kind in enumerate(iterators) if kind != "parallel"]
    grid_shape = [ranges[dim] for dim in parallel]
    grids: list[Any] = [0] * len(ranges)
    for axis, dim in enumerate(parallel):
        shape = [1] * len(parallel)
        shape[axis] = ranges[dim]
        grids[dim] = np.arange(ranges[dim], dtype=np.int64).reshape(shape)
    # Each output seen in parallel-dimension order: writing to the view writes the output.
    views = []
    for output, output_map in zip(outputs, maps[len(inputs) :], strict=True):
        # Every output map is a permutation of dims (checked before this vectorized path).
        positions = [e.position for e in output_map.results if isinstance(e, AffineDimExpr)]
        views.append(output.transpose([positions.index(dim) for dim in parallel]))
    identity = [AffineDimExpr(dim) for dim in parallel]
    stack = index_stack(interpreter)
    for point in itertools.product(*(range(ranges[dim]) for dim in reduction)):
        for dim, value in zip(reduction, point, strict=True):
            grids[dim] = value
        args: list[Any] = []
        for operand, input_map in zip(inputs, maps, strict=False):
            if not isinstance(operand, np.ndarray) or (
                list(input_map.results) == identity and list(operand.shape) == grid_shape
            ):
                args.append(operand)
            else:
                indices = input_map.eval(grids, ())
                _check_indices(indices, operand)
                args.append(operand[indices])
        args.extend(views)
        stack.append(grids)
        try:
            results = _run_body(interpreter, body, args)
        finally:
            stack.pop()
        for view, result in zip(views, results, strict=True):
            view[...] = result


def _run_elementwise(
    interpreter: ReplayInterpreter,
    maps: Sequence[AffineMap],
    ranges: Sequence[int],
    inputs: Sequence[Any],
    outputs: Sequence[np.ndarray],
    body: Body,
) -> None:
    operands = [*inputs, *outputs]
    output_maps = maps[len(inputs) :]
    stack = index_stack(interpreter)
    for point in itertools.product(*(range(size) for size in ranges)):
        args = []
        for operand, operand_map in zip(operands, maps, strict=True):
            if isinstance(operand, np.ndarray):
                indices = operand_map.eval(point, ())
                if min(indices, default=0) < 0:
                    _check_indices(indices, operand)
                args.append(operand[indices])
            else:
                args.append(operand)
        stack.append(point)
        try:
            results = _run_body(interpreter, body, args)
        finally:
            stack.pop()
        for output, output_map, result in zip(outputs, output_maps, results, strict=True):
            output[output_map.eval(point, ())] = result

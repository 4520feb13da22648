"""tensor on numpy arrays. Tensors are values: no op here ever writes into an operand."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import tensor
from xdsl.interpreter import (
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.memref import (
    check_index,
    collapsed_shape,
    strided_slice,
)
from workbench.replay.mlir.interpreters.structured import ELEMENTWISE_OPS
from workbench.replay.mlir.values import (
    mixed_values,
    rank_reduced_axes,
    shape_with,
    uninitialized,
    value_dtype,
)


def _slice_parts(op: Any, dynamic: tuple[Any, ...]) -> tuple[list[int], list[int], list[int]]:
    offsets = mixed_values(op.static_offsets, dynamic[: len(op.offsets)])
    dynamic = dynamic[len(op.offsets) :]
    sizes = mixed_values(op.static_sizes, dynamic[: len(op.sizes)])
    strides = mixed_values(op.static_strides, dynamic[len(op.sizes) :])
    return offsets, sizes, strides


@register_impls
class TensorFunctions(InterpreterFunctions):
    @impl(tensor.EmptyOp)
    def run_empty(
        self, interpreter: ReplayInterpreter, op: tensor.EmptyOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        type_ = op.tensor.type
        return (uninitialized(shape_with(type_, args), value_dtype(type_)),)

    @impl(tensor.ExtractOp)
    def run_extract(
        self, interpreter: ReplayInterpreter, op: tensor.ExtractOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, *indices = args
        index = tuple(indices)
        check_index(source, index, "tensor.extract")
        return (source[index],)

    @impl(tensor.InsertOp)
    def run_insert(
        self, interpreter: ReplayInterpreter, op: tensor.InsertOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        value, dest, *indices = args
        index = tuple(indices)
        check_index(dest, index, "tensor.insert")
        result = np.array(dest, copy=True)
        result[index] = value
        return (result,)

    @impl(tensor.ExtractSliceOp)
    def run_extract_slice(
        self, interpreter: ReplayInterpreter, op: tensor.ExtractSliceOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source = args[0]
        offsets, sizes, strides = _slice_parts(op, args[1:])
        result = strided_slice(source, offsets, sizes, strides)
        result_shape = tuple(op.result.type.get_shape())
        if len(result_shape) != result.ndim:
            result = result.squeeze(axis=tuple(rank_reduced_axes(sizes, result_shape)))
        return (result,)

    @impl(tensor.InsertSliceOp)
    def run_insert_slice(
        self, interpreter: ReplayInterpreter, op: tensor.InsertSliceOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, dest = args[0], args[1]
        offsets, sizes, strides = _slice_parts(op, args[2:])
        result = np.array(dest, copy=True)
        window = strided_slice(result, offsets, sizes, strides)
        window[...] = np.reshape(source, window.shape)
        return (result,)

    @impl(tensor.CastOp)
    def run_cast(
        self, interpreter: ReplayInterpreter, op: tensor.CastOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (args[0],)

    @impl(tensor.DimOp)
    def run_dim(
        self, interpreter: ReplayInterpreter, op: tensor.DimOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, dim = args
        if not 0 <= dim < np.ndim(source):
            raise EvaluationError(f"tensor.dim {int(dim)} of a rank-{np.ndim(source)} tensor")
        return (np.int64(np.shape(source)[dim]),)

    @impl(tensor.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: ReplayInterpreter, op: tensor.CollapseShapeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        (source,) = args
        return (np.reshape(source, collapsed_shape(source.shape, op.reassociation)),)

    @impl(tensor.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: ReplayInterpreter, op: tensor.ExpandShapeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, *dynamic = args
        shape = tuple(mixed_values(op.static_output_shape, tuple(dynamic)))
        return (np.reshape(source, shape),)

    @impl(tensor.ReshapeOp)
    def run_reshape(
        self, interpreter: ReplayInterpreter, op: tensor.ReshapeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, shape = args
        return (np.reshape(source, tuple(int(size) for size in np.asarray(shape))),)

    @impl(tensor.FromElementsOp)
    def run_from_elements(
        self, interpreter: ReplayInterpreter, op: tensor.FromElementsOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        type_ = op.result.type
        values = np.array(args, dtype=value_dtype(type_))
        return (values.reshape(tuple(type_.get_shape())),)

    @impl(tensor.SplatOp)
    def run_splat(
        self, interpreter: ReplayInterpreter, op: tensor.SplatOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        value, *dynamic = args
        type_ = op.result.type
        return (np.full(shape_with(type_, tuple(dynamic)), value, dtype=value_dtype(type_)),)

    @impl(tensor.ConcatOp)
    def run_concat(
        self, interpreter: ReplayInterpreter, op: tensor.ConcatOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (np.concatenate(args, axis=op.dim.value.data),)

    @impl(tensor.PadOp)
    def run_pad(
        self, interpreter: ReplayInterpreter, op: tensor.PadOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source = args[0]
        dynamic = args[1:]
        low = mixed_values(op.static_low, dynamic[: len(op.low)])
        high = mixed_values(op.static_high, dynamic[len(op.low) :])
        if any(size < 0 for size in (*low, *high)):
            raise EvaluationError(f"tensor.pad with negative padding {low}, {high}")
        shape = tuple(size + lo + hi for size, lo, hi in zip(source.shape, low, high, strict=True))
        result = np.empty(shape, dtype=source.dtype)
        if all(
            type(inner) in ELEMENTWISE_OPS or isinstance(inner, tensor.YieldOp)
            for inner in op.region.walk()
        ):
            # The padding value may depend on the position: give the body index grids.
            grids = np.indices(shape, dtype=np.int64) if shape else ()
            (value,) = interpreter.run_ssacfg_region(op.region, tuple(grids), "tensor.pad")
            result[...] = value
        else:
            for index in np.ndindex(shape):
                (value,) = interpreter.run_ssacfg_region(op.region, index, "tensor.pad")
                result[index] = value
        inner = tuple(slice(lo, lo + size) for lo, size in zip(low, source.shape, strict=True))
        result[inner] = source
        return (result,)

    @impl_terminator(tensor.YieldOp)
    def run_yield(
        self, interpreter: ReplayInterpreter, op: tensor.YieldOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

"""memref on numpy buffers: a memref value is a numpy array, a view when it is a subview.

Views are what make memref semantics work: `memref.subview`, `collapse_shape` and
`expand_shape` return numpy views of the same memory (a reshape that would need a copy is an
error, never a silent copy whose writes would be lost), so a store through any of them is seen
through all. Loads and stores check their indices: numpy would wrap a negative index around,
MLIR calls it undefined behaviour. New buffers hold a poison pattern (see
`values.uninitialized`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, UnitAttr
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.traits import SymbolTable

from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.mlir.dialects import memref as replay_memref
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.values import (
    mixed_values,
    rank_reduced_axes,
    shape_with,
    uninitialized,
    value_dtype,
)


def check_index(buffer: np.ndarray, indices: tuple[Any, ...], what: str) -> None:
    for axis, index in enumerate(indices):
        if index < 0 or index >= buffer.shape[axis]:
            raise EvaluationError(
                f"{what} index {int(index)} out of bounds for dimension {axis} "
                f"(size {buffer.shape[axis]})"
            )


def strided_slice(
    source: np.ndarray, offsets: list[int], sizes: list[int], strides: list[int]
) -> np.ndarray:
    """The view `source[offset : offset + size * stride : stride]` along every axis."""
    slices = []
    for axis, (offset, size, stride) in enumerate(zip(offsets, sizes, strides, strict=True)):
        end = offset + (size - 1) * stride + 1 if size else offset
        if offset < 0 or stride < 1 or (size and end > source.shape[axis]):
            raise EvaluationError(
                f"slice [{offset}, size {size}, stride {stride}] out of bounds for dimension "
                f"{axis} (size {source.shape[axis]})"
            )
        slices.append(slice(offset, offset + size * stride, stride))
    return source[tuple(slices)]


def reshaped_view(source: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`source` with a new shape, sharing its memory."""
    try:
        return np.reshape(source, shape, copy=False)
    except ValueError as error:
        raise EvaluationError(f"cannot reshape a {source.shape} view to {shape}: {error}") from None


def collapsed_shape(shape: tuple[int, ...], reassociation: Any) -> tuple[int, ...]:
    groups = [
        [int(dim.value.data if isinstance(dim, IntegerAttr) else dim.data) for dim in group]
        for group in reassociation
    ]
    return tuple(int(np.prod([shape[dim] for dim in group], dtype=np.int64)) for group in groups)


@register_impls
class MemRefFunctions(InterpreterFunctions):
    @impl(replay_memref.AllocOp)
    def run_alloc(
        self, interpreter: ReplayInterpreter, op: memref.AllocOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        dynamic = args[: len(op.dynamic_sizes)]
        type_ = op.memref.type
        return (uninitialized(shape_with(type_, dynamic), value_dtype(type_)),)

    @impl(replay_memref.AllocaOp)
    def run_alloca(
        self, interpreter: ReplayInterpreter, op: memref.AllocaOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        dynamic = args[: len(op.dynamic_sizes)]
        type_ = op.memref.type
        return (uninitialized(shape_with(type_, dynamic), value_dtype(type_)),)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: ReplayInterpreter, op: memref.DeallocOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return ()

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: ReplayInterpreter, op: memref.LoadOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        buffer, *indices = args
        index = tuple(indices)
        check_index(buffer, index, "memref.load")
        return (buffer[index],)

    @impl(memref.StoreOp)
    def run_store(
        self, interpreter: ReplayInterpreter, op: memref.StoreOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        value, buffer, *indices = args
        index = tuple(indices)
        check_index(buffer, index, "memref.store")
        buffer[index] = value
        return ()

    @impl(replay_memref.CastOp)
    def run_cast(
        self, interpreter: ReplayInterpreter, op: memref.CastOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        (buffer,) = args
        result_type = op.dest.type
        if isinstance(result_type, MemRefType) and any(
            size not in (DYNAMIC_INDEX, actual)
            for size, actual in zip(result_type.get_shape(), buffer.shape, strict=True)
        ):
            raise EvaluationError(f"memref.cast of a {buffer.shape} buffer to {result_type}")
        return (buffer,)

    @impl(replay_memref.MemorySpaceCastOp)
    def run_memory_space_cast(
        self, interpreter: ReplayInterpreter, op: memref.MemorySpaceCastOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (args[0],)

    @impl(memref.AssumeAlignmentOp)
    def run_assume_alignment(
        self, interpreter: ReplayInterpreter, op: memref.AssumeAlignmentOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return tuple(args[: len(op.results)])

    @impl(memref.DimOp)
    def run_dim(
        self, interpreter: ReplayInterpreter, op: memref.DimOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        buffer, dim = args
        if not 0 <= dim < buffer.ndim:
            raise EvaluationError(f"memref.dim {int(dim)} of a rank-{buffer.ndim} memref")
        return (np.int64(buffer.shape[dim]),)

    @impl(replay_memref.RankOp)
    def run_rank(
        self, interpreter: ReplayInterpreter, op: memref.RankOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (np.int64(args[0].ndim),)

    @impl(replay_memref.CopyOp)
    def run_copy(
        self, interpreter: ReplayInterpreter, op: memref.CopyOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, destination = args
        if source.shape != destination.shape:
            raise EvaluationError(f"memref.copy from {source.shape} to {destination.shape}")
        destination[...] = source
        return ()

    @impl(memref.SubviewOp)
    def run_subview(
        self, interpreter: ReplayInterpreter, op: memref.SubviewOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source = args[0]
        dynamic = args[1:]
        offsets = mixed_values(op.static_offsets, dynamic[: len(op.offsets)])
        dynamic = dynamic[len(op.offsets) :]
        sizes = mixed_values(op.static_sizes, dynamic[: len(op.sizes)])
        strides = mixed_values(op.static_strides, dynamic[len(op.sizes) :])
        view = strided_slice(source, offsets, sizes, strides)
        result_shape = tuple(op.result.type.get_shape())
        if len(result_shape) != view.ndim:
            view = view.squeeze(axis=tuple(rank_reduced_axes(sizes, result_shape)))
        return (view,)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: ReplayInterpreter, op: memref.CollapseShapeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        (source,) = args
        return (reshaped_view(source, collapsed_shape(source.shape, op.reassociation)),)

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: ReplayInterpreter, op: memref.ExpandShapeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, *dynamic = args
        shape = tuple(mixed_values(op.static_output_shape, tuple(dynamic)))
        return (reshaped_view(source, shape),)

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: ReplayInterpreter, op: memref.GetGlobalOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        key = ("memref.global", op.name_.string_value())
        buffer = interpreter.cache.get(key)
        if buffer is None:
            definition = SymbolTable.lookup_symbol(op, op.name_)
            if not isinstance(definition, memref.GlobalOp):
                raise EvaluationError(f"memref.get_global: no memref.global {op.name_}")
            initial = definition.initial_value
            type_ = definition.type
            if isinstance(initial, UnitAttr):
                if definition.constant is not None:
                    raise Unsupported(f"memref.global constant {op.name_} without a value")
                buffer = uninitialized(tuple(type_.get_shape()), value_dtype(type_))
            else:
                buffer = np.array(interpreter.constant(definition, initial, type_), copy=True)
            if definition.constant is not None:
                buffer.flags.writeable = False
            interpreter.cache[key] = buffer
        return (buffer,)

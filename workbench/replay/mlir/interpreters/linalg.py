"""linalg: `generic` and the named ops pipelines emit, through one structured-op engine.

On tensors an op returns new arrays (its `outs` are copied first); on memrefs it writes into
the `outs` buffers and returns nothing. Named ops follow their definitions in MLIR's
OpDSL: contractions (`matmul`) cast their inputs to the output's element type before the
multiply-accumulate (signed casts: the default `cast_signed`); `fill` casts its value;
`copy`, `transpose` and `broadcast` move elements; `reduce` folds its region over the reduced
dimensions in order. The elementwise named ops run the body xDSL defines for them.
Contractions take their indexing maps from the op (`linalg.matmul indexing_maps = [...]`
transposes or broadcasts an operand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.interpreter import (
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.ir.affine import AffineDimExpr, AffineMap

from workbench.replay.errors import Unsupported
from workbench.replay.mlir.dialects.linalg import CONTRACTION_OPS
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.structured import index_stack, run_structured


def _split(op: LinalgStructuredOperation,
           args: tuple[Any, ...]) -> tuple[list[Any], list[np.ndarray]]:
    count = len(op.inputs)
    return list(args[:count]), list(args[count:])


def _destinations(op: LinalgStructuredOperation, outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Where results go: fresh copies for tensors, the buffers themselves for memrefs."""
    return [
        output if isinstance(value.type, MemRefType) else np.array(output, copy=True)
        for output, value in zip(outputs, op.outputs, strict=True)
    ]


def _results(op: LinalgStructuredOperation, destinations: Sequence[np.ndarray]) -> tuple[Any, ...]:
    return tuple(destinations) if op.results else ()


def _maps(op: LinalgStructuredOperation) -> list[AffineMap]:
    return [attr.data for attr in op.get_indexing_maps()]


def _iterators(op: LinalgStructuredOperation) -> list[str]:
    return [attr.data.value for attr in op.get_iterator_types()]


def _run_with_body(
    interpreter: ReplayInterpreter, op: LinalgStructuredOperation, args: tuple[Any, ...],
    body: Any,
) -> tuple[Any, ...]:
    inputs, outputs = _split(op, args)
    destinations = _destinations(op, outputs)
    run_structured(interpreter, _maps(op), _iterators(op), inputs, destinations, body)
    return _results(op, destinations)


def _cast_to(value: Any, dtype: np.dtype) -> Any:
    array = np.asarray(value)
    if array.dtype == np.bool_ and dtype != np.bool_:
        # cast_signed: i1 true is -1.
        array = -array.astype(np.int8)
    return array.astype(dtype, copy=False)


@register_impls
class LinalgFunctions(InterpreterFunctions):
    @impl(linalg.GenericOp)
    def run_generic(
        self, interpreter: ReplayInterpreter, op: linalg.GenericOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        if op.library_call is not None:
            raise Unsupported(f"linalg.generic with library_call {op.library_call}")
        return _run_with_body(interpreter, op, args, op.body)

    @impl_terminator(linalg.YieldOp)
    def run_yield(
        self, interpreter: ReplayInterpreter, op: linalg.YieldOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

    @impl(linalg.IndexOp)
    def run_index(
        self, interpreter: ReplayInterpreter, op: linalg.IndexOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        stack = index_stack(interpreter)
        if not stack:
            raise Unsupported("linalg.index outside a structured op body")
        return (stack[-1][op.dim.value.data],)

    @impl(linalg.FillOp)
    def run_fill(
        self, interpreter: ReplayInterpreter, op: linalg.FillOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        inputs, outputs = _split(op, args)
        destinations = _destinations(op, outputs)
        for destination in destinations:
            destination[...] = _cast_to(inputs[0], destination.dtype)
        return _results(op, destinations)

    @impl(linalg.CopyOp)
    def run_copy(
        self, interpreter: ReplayInterpreter, op: linalg.CopyOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        inputs, outputs = _split(op, args)
        destinations = _destinations(op, outputs)
        destinations[0][...] = _cast_to(inputs[0], destinations[0].dtype)
        return _results(op, destinations)

    @impl(linalg.TransposeOp)
    def run_transpose(
        self, interpreter: ReplayInterpreter, op: linalg.TransposeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        inputs, outputs = _split(op, args)
        destinations = _destinations(op, outputs)
        permutation = [int(value) for value in op.permutation.get_values()]
        destinations[0][...] = np.transpose(inputs[0], permutation)
        return _results(op, destinations)

    @impl(linalg.BroadcastOp)
    def run_broadcast(
        self, interpreter: ReplayInterpreter, op: linalg.BroadcastOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, init = args
        destination = init if isinstance(op.init.type, MemRefType) else np.array(init, copy=True)
        added = sorted(int(value) for value in op.dimensions.get_values())
        expanded = np.expand_dims(np.asarray(source), added)
        destination[...] = np.broadcast_to(expanded, destination.shape)
        return (destination,) if op.result else ()

    @impl(linalg.ReduceOp)
    def run_reduce(
        self, interpreter: ReplayInterpreter, op: linalg.ReduceOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        source, init = args
        destination = init if isinstance(op.init.type, MemRefType) else np.array(init, copy=True)
        rank = np.ndim(source)
        reduced = {int(value) for value in op.dimensions.get_values()}
        kept = [dim for dim in range(rank) if dim not in reduced]
        maps = [
            AffineMap.identity(rank),
            AffineMap(rank, 0, tuple(AffineDimExpr(dim) for dim in kept)),
        ]
        iterators = ["reduction" if dim in reduced else "parallel" for dim in range(rank)]
        run_structured(interpreter, maps, iterators, [source], [destination], op.region)
        return (destination,) if op.result else ()


def _run_contraction(
    interpreter: ReplayInterpreter, op: LinalgStructuredOperation, args: tuple[Any, ...]
) -> tuple[Any, ...]:
    """`out += cast(lhs) * cast(rhs)` (matmul and kin), in the output's element type."""
    cast = op.properties.get("cast") or op.attributes.get("cast")
    if cast is not None and "unsigned" in str(cast):
        raise Unsupported(f"{op.name} with cast_unsigned")
    output_dtype = np.asarray(args[-1]).dtype

    def multiply_accumulate(lhs: Any, rhs: Any, accumulator: Any) -> tuple[Any]:
        product = np.multiply(_cast_to(lhs, output_dtype), _cast_to(rhs, output_dtype))
        return (np.add(accumulator, product),)

    return _run_with_body(interpreter, op, args, multiply_accumulate)


def _contraction(op_type: type[Operation]) -> Any:
    def run(
        self: InterpreterFunctions,
        interpreter: ReplayInterpreter,
        op: LinalgStructuredOperation,
        args: tuple[Any, ...],
    ) -> tuple[Any, ...]:
        return _run_contraction(interpreter, op, args)

    return impl(op_type)(run)


ContractionFunctions: type[InterpreterFunctions] = register_impls(
    type(
        "ContractionFunctions",
        (InterpreterFunctions,),
        {f"run_{op_type.__name__}": _contraction(op_type) for op_type in CONTRACTION_OPS},
    )
)


def _elementwise_named(op_type: type[Operation]) -> Any:
    def run(
        self: InterpreterFunctions,
        interpreter: ReplayInterpreter,
        op: LinalgStructuredOperation,
        args: tuple[Any, ...],
    ) -> tuple[Any, ...]:
        return _run_with_body(interpreter, op, args, op.body)

    return impl(op_type)(run)


ElementwiseNamedFunctions: type[InterpreterFunctions] = register_impls(
    type(
        "ElementwiseNamedFunctions",
        (InterpreterFunctions,),
        {
            f"run_{op_type.__name__}": _elementwise_named(op_type)
            for op_type in (
                linalg.AddOp,
                linalg.SubOp,
                linalg.MulOp,
                linalg.MaxOp,
                linalg.MinOp,
                linalg.ExpOp,
                linalg.LogOp,
                linalg.SqrtOp,
                linalg.SelectOp,
            )
        },
    )
)

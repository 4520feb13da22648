"""bufferization: moving between tensor values and memref buffers.

Every conversion copies. A tensor is a value that must not change when a buffer it came from
is written later, and a buffer made from a tensor may be written without changing the tensor;
MLIR leaves aliasing of these conversions to the bufferization analysis, which the replay
does not redo, and a copy is correct in every case its analysis allows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import bufferization
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from workbench.replay.mlir.dialects import bufferization as replay_bufferization
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.values import shape_with, uninitialized, value_dtype


def _copy(value: Any) -> np.ndarray:
    return np.array(value, copy=True)


@register_impls
class BufferizationFunctions(InterpreterFunctions):
    @impl(replay_bufferization.ToTensorOp)
    def run_to_tensor(
        self, interpreter: ReplayInterpreter, op: Any, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (_copy(args[0]),)

    @impl(replay_bufferization.ToBufferOp)
    def run_to_buffer(
        self, interpreter: ReplayInterpreter, op: Any, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (_copy(args[0]),)

    @impl(replay_bufferization.ToMemrefOp)
    def run_to_memref(
        self, interpreter: ReplayInterpreter, op: Any, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (_copy(args[0]),)

    @impl(bufferization.CloneOp)
    def run_clone(
        self, interpreter: ReplayInterpreter, op: bufferization.CloneOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (_copy(args[0]),)

    @impl(bufferization.AllocTensorOp)
    def run_alloc_tensor(
        self, interpreter: ReplayInterpreter, op: bufferization.AllocTensorOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        dynamic = args[: len(op.dynamic_sizes)]
        if op.copy is not None:
            return (_copy(args[len(op.dynamic_sizes)]),)
        type_ = op.tensor.type
        return (uninitialized(shape_with(type_, dynamic), value_dtype(type_)),)

    @impl(bufferization.MaterializeInDestinationOp)
    def run_materialize_in_destination(
        self,
        interpreter: ReplayInterpreter,
        op: bufferization.MaterializeInDestinationOp,
        args: tuple[Any, ...],
    ) -> tuple[Any, ...]:
        source, destination = args
        if op.result is None:
            destination[...] = source
            return ()
        return (_copy(np.broadcast_to(source, np.shape(destination))),)

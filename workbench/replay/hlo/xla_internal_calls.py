"""Custom-calls XLA's own CPU pipeline writes (not a library's kernels): their targets and
what they compute.

- `TopK` (`TopkRewriter`, for `lax.top_k`): operand `[batch,] n`, comparator over
  (value, index) pairs in `called_computations`; the result is (values, indices) of the first
  k (the result's last dimension) in the comparator's stable order, indices as s32 positions
  along the last dimension.

The CPU pipeline's other rewrites into custom-calls, oneDNN's (`__onednn$matmul`,
`__onednn$convolution`, `__onednn$softmax`, `__onednn$layernorm`), run only in builds with
oneDNN enabled and are `unsupported: custom-call <target>` here, as is the dynamic padder's
`PadToStatic`/`SliceToDynamic` (dynamic shapes are not modelled).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.dtypes import dtype_of
from workbench.replay.hlo.registry import Value, handles_custom_call
from workbench.replay.hlo.sort import sort_order

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


@handles_custom_call("TopK")
def top_k(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    shape = instruction.shape
    if len(operands) != 1 or not shape.is_tuple or len(shape.tuple_shapes) != 2 or \
            len(instruction.called_computations) != 1:
        raise Unsupported(f"custom-call TopK with {len(operands)} operands and result {shape}")
    x = np.asarray(operands[0])
    values_shape, indices_shape = shape.tuple_shapes
    if x.ndim == 0 or values_shape.dims[:-1] != x.shape[:-1]:
        raise EvaluationError(f"{instruction.name}: TopK of {x.shape} into {values_shape}")
    k = values_shape.dims[-1]
    if k > x.shape[-1]:
        raise EvaluationError(f"{instruction.name}: TopK of {k} from {x.shape[-1]} elements")
    index_type = dtype_of(indices_shape.element_type)
    positions = np.broadcast_to(np.arange(x.shape[-1], dtype=index_type), x.shape)
    order = sort_order(interpreter, instruction.called_computations[0], [x, positions], -1)
    order = order[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(index_type)


"""`gather`, vectorized: one fancy-indexing read of the whole result.

Per Operation Semantics: each batch position of `start_indices` gives a start vector mapped to
operand dimensions by `start_index_map` (batching dimensions take the batch coordinate
itself); starts are clamped so the slice fits; the slice drops `collapsed_slice_dims` and
`operand_batching_dims`; its remaining dimensions land at `offset_dims` of the result and the
batch dimensions fill the others, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


def index_batches(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """Indices as (batch..., vector) int64, adding the implicit trailing vector dimension."""
    indices = np.asarray(indices).astype(np.int64)
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def batch_axis(indices_dim: int, index_vector_dim: int) -> int:
    """Position among the batch axes of a dimension of the original indices array."""
    return indices_dim if indices_dim < index_vector_dim else indices_dim - 1


@handles("gather")
def gather(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    operand = np.asarray(operands[0])
    numbers = instruction.gather_dimension_numbers
    sizes = instruction.gather_slice_sizes
    if numbers is None or sizes is None:
        raise EvaluationError(f"{instruction.name}: gather without dimension numbers")
    batches = index_batches(operands[1], numbers.index_vector_dim)
    batch_shape = batches.shape[:-1]
    rank = operand.ndim
    starts = [np.zeros(batch_shape, np.int64) for _ in range(rank)]
    for k, dimension in enumerate(numbers.start_index_map):
        starts[dimension] = batches[..., k]
    if numbers.operand_batching_dims:
        coordinates: tuple[np.ndarray, ...] = (np.indices(batch_shape, sparse=True)
                                               if batch_shape else ())
        for dimension, indices_dim in zip(numbers.operand_batching_dims,
                                          numbers.start_indices_batching_dims, strict=True):
            axis = batch_axis(indices_dim, numbers.index_vector_dim)
            starts[dimension] = np.broadcast_to(coordinates[axis], batch_shape)
    nbatch = len(batch_shape)
    index = []
    for d in range(rank):
        start = np.clip(starts[d], 0, operand.shape[d] - sizes[d])
        offsets = np.arange(sizes[d]).reshape([1] * (nbatch + d) + [sizes[d]]
                                              + [1] * (rank - d - 1))
        index.append(start.reshape(batch_shape + (1,) * rank) + offsets)
    result = operand[tuple(index)] if rank else np.broadcast_to(operand, batch_shape)
    dropped = set(numbers.collapsed_slice_dims) | set(numbers.operand_batching_dims)
    result = result.reshape(batch_shape + tuple(
        sizes[d] for d in range(rank) if d not in dropped))
    # Result axes: offset dims at `offset_dims`, batch dims elsewhere in order.
    out_rank = result.ndim
    offset_dims = list(numbers.offset_dims)
    batch_positions = [p for p in range(out_rank) if p not in offset_dims]
    source_of = [0] * out_rank
    for i, position in enumerate(batch_positions):
        source_of[position] = i
    for i, position in enumerate(offset_dims):
        source_of[position] = nbatch + i
    return np.transpose(result, source_of)

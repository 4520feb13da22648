"""`scatter`, vectorized: target positions of every update element are computed at once, then
combined in XLA's order (update windows in row-major order of the scatter dimensions, each
window in row-major order). A window that does not fit in the operand at its start index is
skipped whole, as XLA's scatter expander and HloEvaluator do (scatter never clamps)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError
from workbench.replay.hlo.combiners import Combiner, combine_at
from workbench.replay.hlo.gather import batch_axis, index_batches
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


@handles("scatter")
def scatter(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    count = (len(operands) - 1) // 2
    targets = [np.asarray(x) for x in operands[:count]]
    updates = [np.asarray(u) for u in operands[count + 1:]]
    numbers = instruction.scatter_dimension_numbers
    if numbers is None:
        raise EvaluationError(f"{instruction.name}: scatter without dimension numbers")
    shape = targets[0].shape
    rank = len(shape)
    batches = index_batches(operands[count], numbers.index_vector_dim)
    batch_shape = batches.shape[:-1]
    window_dims = list(numbers.update_window_dims)
    scatter_dims = [d for d in range(updates[0].ndim) if d not in window_dims]
    updates = [np.transpose(u, scatter_dims + window_dims) for u in updates]
    if updates[0].shape[:len(scatter_dims)] != batch_shape:
        raise EvaluationError(f"{instruction.name}: updates do not match scatter indices")
    window_shape = updates[0].shape[len(scatter_dims):]
    skipped = set(numbers.inserted_window_dims) | set(numbers.input_batching_dims)
    operand_window_dims = [d for d in range(rank) if d not in skipped]
    if len(operand_window_dims) != len(window_shape):
        raise EvaluationError(f"{instruction.name}: update window rank does not match")

    starts = [np.zeros(batch_shape, np.int64) for _ in range(rank)]
    for k, dimension in enumerate(numbers.scatter_dims_to_operand_dims):
        starts[dimension] = batches[..., k]
    if numbers.input_batching_dims:
        coordinates = np.indices(batch_shape, sparse=True)
        for dimension, indices_dim in zip(numbers.input_batching_dims,
                                          numbers.scatter_indices_batching_dims, strict=True):
            axis = batch_axis(indices_dim, numbers.index_vector_dim)
            starts[dimension] = np.broadcast_to(coordinates[axis], batch_shape)
    sizes = [1] * rank
    for d, size in zip(operand_window_dims, window_shape, strict=True):
        sizes[d] = size
    fits = np.ones(batch_shape, bool)
    for d in range(rank):
        fits &= (starts[d] >= 0) & (starts[d] <= shape[d] - sizes[d])

    nbatch = len(batch_shape)
    full = batch_shape + window_shape
    strides = np.cumprod((1, *shape[::-1]))[::-1][1:] if rank else np.array([], np.int64)
    flat = np.zeros(full, np.int64)
    for d in range(rank):
        term = starts[d].reshape(batch_shape + (1,) * len(window_shape))
        if d in operand_window_dims:
            j = operand_window_dims.index(d)
            term = term + np.arange(window_shape[j]).reshape(
                [1] * (nbatch + j) + [window_shape[j]] + [1] * (len(window_shape) - j - 1))
        flat = flat + term * int(strides[d])
    chosen = np.broadcast_to(fits.reshape(batch_shape + (1,) * len(window_shape)), full)
    results = [np.array(t).reshape(-1) for t in targets]
    combiner = Combiner(interpreter, instruction.called_computations[0],
                        [t.dtype for t in targets])
    combine_at(combiner, results, flat[chosen], [u[chosen] for u in updates])
    reshaped = [r.reshape(shape) for r in results]
    return reshaped[0] if count == 1 else tuple(reshaped)

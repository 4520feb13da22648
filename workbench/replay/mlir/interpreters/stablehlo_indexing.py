"""StableHLO gather and scatter, following the specification's index arithmetic.

Both compute, for every element of the result (gather) or of the updates (scatter), the operand
index it reads or writes: a start index taken from the index tensor (its vector along
`index_vector_dim`, scattered into operand dimensions by `start_index_map` /
`scatter_dims_to_operand_dims`), plus the batching index, plus the offset inside the window.
Here those indices are computed for all elements at once as numpy index arrays.

Dimension numbers leave out the fields that are empty or zero when printed (so an absent
`index_vector_dim` is 0). Gather clamps each start so the whole slice is in bounds. Scatter
skips updates whose index falls outside the operand; updates to the same element are combined
in row-major order of the updates (the specification leaves that order to the implementation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.dialects import stablehlo
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.stablehlo_attrs import dimension_numbers, int_list
from workbench.replay.mlir.interpreters.stablehlo_reduce import _single_ufunc
from workbench.replay.mlir.values import static_shape


def _start_vectors(
    indices: np.ndarray, index_vector_dim: int, batch_grids: list[np.ndarray]
) -> list[np.ndarray]:
    """For each component of the index vector, its value at every batch position."""
    if index_vector_dim == indices.ndim:
        indices = indices[..., None]
    components = []
    for component in range(indices.shape[index_vector_dim]):
        position = list(batch_grids)
        position.insert(
            index_vector_dim,
            np.full_like(batch_grids[0], component) if batch_grids else np.int64(component),
        )
        components.append(np.asarray(indices[tuple(position)], dtype=np.int64))
    return components


def _batch_position(batch_grids: list[np.ndarray], dim: int, index_vector_dim: int) -> np.ndarray:
    """The batch grid of index-tensor dimension `dim` (the vector dimension is not a batch)."""
    return batch_grids[dim if dim < index_vector_dim else dim - 1]


@register_impls
class IndexingFunctions(InterpreterFunctions):
    @impl(stablehlo.GatherOp)
    def run_gather(
        self, interpreter: ReplayInterpreter, op: stablehlo.GatherOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        operand, indices = (np.asarray(value) for value in args)
        numbers = dimension_numbers(op, "dimension_numbers")
        offset_dims = numbers.get("offset_dims", [])
        collapsed = numbers.get("collapsed_slice_dims", [])
        operand_batching = numbers.get("operand_batching_dims", [])
        indices_batching = numbers.get("start_indices_batching_dims", [])
        start_index_map = numbers.get("start_index_map", [])
        index_vector_dim = numbers.get("index_vector_dim", 0)
        slice_sizes = int_list(op, "slice_sizes")
        result_shape = static_shape(op.results[0].type)
        grids = list(np.indices(result_shape, dtype=np.int64)) if result_shape else []
        batch_dims = [d for d in range(len(result_shape)) if d not in offset_dims]
        batch_grids = [grids[d] for d in batch_dims]
        starts = _start_vectors(indices, index_vector_dim, batch_grids)
        zero = np.zeros(result_shape, dtype=np.int64)
        position = [zero.copy() for _ in range(operand.ndim)]
        for component, operand_dim in enumerate(start_index_map):
            limit = operand.shape[operand_dim] - slice_sizes[operand_dim]
            position[operand_dim] = position[operand_dim] + np.clip(starts[component], 0, limit)
        for operand_dim, indices_dim in zip(operand_batching, indices_batching, strict=True):
            position[operand_dim] = position[operand_dim] + _batch_position(
                batch_grids, indices_dim, index_vector_dim
            )
        window_dims = [
            d for d in range(operand.ndim) if d not in collapsed and d not in operand_batching
        ]
        for result_dim, operand_dim in zip(offset_dims, window_dims, strict=True):
            position[operand_dim] = position[operand_dim] + grids[result_dim]
        return (operand[tuple(position)],)

    @impl(stablehlo.ScatterOp)
    def run_scatter(
        self, interpreter: ReplayInterpreter, op: stablehlo.ScatterOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        count = (len(args) - 1) // 2
        results = [np.array(value, copy=True) for value in args[:count]]
        indices = np.asarray(args[count])
        updates = [np.asarray(value) for value in args[count + 1 :]]
        numbers = dimension_numbers(op, "scatter_dimension_numbers")
        window_dims = numbers.get("update_window_dims", [])
        inserted = numbers.get("inserted_window_dims", [])
        input_batching = numbers.get("input_batching_dims", [])
        indices_batching = numbers.get("scatter_indices_batching_dims", [])
        to_operand = numbers.get("scatter_dims_to_operand_dims", [])
        index_vector_dim = numbers.get("index_vector_dim", 0)
        shape = updates[0].shape
        grids = list(np.indices(shape, dtype=np.int64)) if shape else []
        scatter_dims = [d for d in range(len(shape)) if d not in window_dims]
        batch_grids = [grids[d] for d in scatter_dims]
        starts = _start_vectors(indices, index_vector_dim, batch_grids)
        operand = results[0]
        position = [np.zeros(shape, dtype=np.int64) for _ in range(operand.ndim)]
        for component, operand_dim in enumerate(to_operand):
            position[operand_dim] = position[operand_dim] + starts[component]
        for operand_dim, indices_dim in zip(input_batching, indices_batching, strict=True):
            position[operand_dim] = position[operand_dim] + _batch_position(
                batch_grids, indices_dim, index_vector_dim
            )
        operand_window_dims = [
            d for d in range(operand.ndim) if d not in inserted and d not in input_batching
        ]
        for update_dim, operand_dim in zip(window_dims, operand_window_dims, strict=True):
            position[operand_dim] = position[operand_dim] + grids[update_dim]
        in_bounds = np.ones(shape, dtype=np.bool_)
        for dim, index in enumerate(position):
            in_bounds &= (index >= 0) & (index < operand.shape[dim])
        targets = tuple(index[in_bounds] for index in position)
        values = [update[in_bounds] for update in updates]
        region = op.regions[0]
        ufunc = _single_ufunc(region)
        if ufunc is not None and count == 1:
            ufunc.at(results[0], targets, values[0])
            return tuple(results)
        for element in range(len(values[0])):
            target = tuple(int(index[element]) for index in targets)
            current = [result[target] for result in results]
            new = interpreter.run_ssacfg_region(
                region, (*current, *(value[element] for value in values)), "stablehlo.scatter"
            )
            if len(new) != count:
                raise EvaluationError("stablehlo.scatter's body returned the wrong count")
            for result, value in zip(results, new, strict=True):
                result[target] = value
        return tuple(results)

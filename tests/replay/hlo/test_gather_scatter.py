"""gather and scatter (one file: they share index handling), against Operation Semantics
examples and a per-element reference loop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.helpers.hlo_builders import array_shape, assert_same, run, scalar_computation
from workbench.hlo_ir import GatherDimensionNumbers, ScatterDimensionNumbers


def test_gather_rows_with_clamping() -> None:
    operand = np.arange(12, dtype=np.float32).reshape(4, 3)
    indices = np.array([2, -1, 9], np.int32)
    numbers = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                     start_index_map=(0,), index_vector_dim=1)
    result = run("gather", array_shape("f32", 3, 3), operand, indices,
                 gather_dimension_numbers=numbers, gather_slice_sizes=(1, 3))
    assert_same(result, operand[[2, 0, 3]])


def test_gather_windows_and_offset_dims_placement() -> None:
    operand = np.arange(20, dtype=np.int32).reshape(4, 5)
    indices = np.array([[0, 1], [2, 3]], np.int32)  # (row, col) starts, vector dim 1
    numbers = GatherDimensionNumbers(offset_dims=(0, 2), start_index_map=(0, 1),
                                     index_vector_dim=1)
    result = run("gather", array_shape("s32", 2, 2, 2), operand, indices,
                 gather_dimension_numbers=numbers, gather_slice_sizes=(2, 2))
    windows = [operand[0:2, 1:3], operand[2:4, 3:5]]
    assert_same(result, np.stack(windows, axis=1))


def test_gather_with_batching_dims() -> None:
    operand = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # batch 2
    indices = np.array([[1, 3], [0, 2]], np.int32)  # per batch: 2 picks along dim 2
    numbers = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1, 2),
                                     start_index_map=(1, 2), index_vector_dim=2,
                                     operand_batching_dims=(0,),
                                     start_indices_batching_dims=(0,))
    starts = np.stack([np.zeros((2, 2), np.int32), indices], axis=-1)
    result = run("gather", array_shape("f32", 2, 2), operand, starts,
                 gather_dimension_numbers=numbers, gather_slice_sizes=(1, 1, 1))
    assert_same(result, np.array([[operand[0, 0, 1], operand[0, 0, 3]],
                                  [operand[1, 0, 0], operand[1, 0, 2]]], np.float32))


def reference_scatter(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                      combine: object) -> np.ndarray:
    """Row scatter (inserted dim 0) done element by element, skipping windows that do not fit."""
    out = operand.copy()
    for k, start in enumerate(indices):
        if not 0 <= start <= operand.shape[0] - 1:
            continue
        for j in range(operand.shape[1]):
            out[start, j] = combine(out[start, j], updates[k, j])
    return out


@pytest.mark.parametrize(("opcode", "combine"), [("add", np.add), ("maximum", np.maximum),
                                                 ("multiply", np.multiply)])
def test_scatter_rows_with_duplicates_and_out_of_bounds(opcode: str, combine: object) -> None:
    operand = np.arange(8, dtype=np.float32).reshape(4, 2)
    indices = np.array([1, 3, 1, -1, 4, 1], np.int32)
    updates = np.arange(12, dtype=np.float32).reshape(6, 2) - 5
    numbers = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    result = run("scatter", "f32", operand, indices, updates, scatter_dimension_numbers=numbers,
                 called_computations=["c"], computations=(scalar_computation("c", opcode, "f32"),))
    assert_same(result, reference_scatter(operand, indices, updates, combine))


def test_scatter_assign_keeps_the_last_update_and_skips_partial_windows() -> None:
    operand = np.zeros(5, np.int32)
    indices = np.array([[1], [1], [4], [3]], np.int32)
    updates = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)
    numbers = ScatterDimensionNumbers(update_window_dims=(1,), scatter_dims_to_operand_dims=(0,),
                                      index_vector_dim=1)
    assign = scalar_computation("assign", "add", "s32")
    assign.instructions[-1].opcode = "copy"
    assign.instructions[-1].operands = ["b"]
    result = run("scatter", "s32", operand, indices, updates, scatter_dimension_numbers=numbers,
                 called_computations=["assign"], computations=(assign,))
    # [4] does not fit a window of 2 at the end: skipped whole.
    assert_same(result, np.array([0, 3, 4, 7, 8], np.int32))


def test_scatter_matches_reference_on_random_data() -> None:
    rng = np.random.default_rng(7)
    numbers = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    for _, size in itertools.product(range(5), (1, 7, 30)):
        operand = rng.standard_normal((6, 3)).astype(np.float32)
        indices = rng.integers(-2, 8, size).astype(np.int32)
        updates = rng.standard_normal((size, 3)).astype(np.float32)
        result = run("scatter", "f32", operand, indices, updates,
                     scatter_dimension_numbers=numbers, called_computations=["c"],
                     computations=(scalar_computation("c", "add", "f32"),))
        assert_same(result, reference_scatter(operand, indices, updates, np.add))

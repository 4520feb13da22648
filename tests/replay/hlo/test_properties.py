"""Shape-manipulating ops against their numpy equivalents, on hypothesis-generated arrays."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import (
    GatherDimensionNumbers,
    PaddingDimension,
    Shape,
    SliceDimension,
)

SETTINGS = settings(max_examples=40, deadline=None)
arrays = hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4),
                    elements=st.integers(-100, 100))


def shape(array: np.ndarray) -> Shape:
    return Shape("s32", tuple(array.shape))


@SETTINGS
@given(arrays, st.data())
def test_reshape_and_transpose(x: np.ndarray, data: st.DataObject) -> None:
    flat = (x.size,)
    assert_same(run("reshape", Shape("s32", flat), x), x.reshape(flat))
    permutation = data.draw(st.permutations(range(x.ndim)))
    expected = np.transpose(x, permutation)
    assert_same(run("transpose", shape(expected), x, dimensions=tuple(permutation)), expected)


@SETTINGS
@given(arrays, st.data())
def test_broadcast_into_a_larger_rank(x: np.ndarray, data: st.DataObject) -> None:
    extra = data.draw(st.integers(1, 3))
    out_dims = (extra, *x.shape)
    expected = np.broadcast_to(x, out_dims)
    assert_same(run("broadcast", Shape("s32", out_dims), x,
                    dimensions=tuple(range(1, x.ndim + 1))), expected)


@SETTINGS
@given(arrays, st.data())
def test_slice_reverse_and_concatenate(x: np.ndarray, data: st.DataObject) -> None:
    bounds = []
    for n in x.shape:
        start = data.draw(st.integers(0, n - 1))
        limit = data.draw(st.integers(start + 1, n))
        stride = data.draw(st.integers(1, 3))
        bounds.append(SliceDimension(start, limit, stride))
    expected = x[tuple(slice(b.start, b.limit, b.stride) for b in bounds)]
    assert_same(run("slice", shape(expected), x, slice=tuple(bounds)), expected)
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, x.ndim - 1)))))
    assert_same(run("reverse", shape(x), x, dimensions=axes), np.flip(x, axes) if axes else x)
    axis = data.draw(st.integers(0, x.ndim - 1))
    joined = np.concatenate([x, -x, x], axis=axis)
    assert_same(run("concatenate", shape(joined), x, -x, x, dimensions=(axis,)), joined)


@SETTINGS
@given(arrays, st.data())
def test_pad_matches_numpy_for_non_negative_edges(x: np.ndarray, data: st.DataObject) -> None:
    config = tuple(PaddingDimension(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
                   for _ in x.shape)
    expected = np.pad(x, [(c.edge_padding_low, c.edge_padding_high) for c in config],
                      constant_values=7)
    assert_same(run("pad", shape(expected), x, np.int32(7), padding_config=config), expected)


@SETTINGS
@given(arrays, st.data())
def test_dynamic_slice_is_a_clamped_slice(x: np.ndarray, data: st.DataObject) -> None:
    sizes = tuple(data.draw(st.integers(1, n)) for n in x.shape)
    starts = [data.draw(st.integers(-3, n + 3)) for n in x.shape]
    clamped = [min(max(s, 0), n - k) for s, n, k in zip(starts, x.shape, sizes, strict=True)]
    expected = x[tuple(slice(s, s + k) for s, k in zip(clamped, sizes, strict=True))]
    result = run("dynamic-slice", shape(expected), x, *[np.int32(s) for s in starts],
                 dynamic_slice_sizes=sizes)
    assert_same(result, expected)


@SETTINGS
@given(arrays, st.data())
def test_gather_along_axis_zero_is_take(x: np.ndarray, data: st.DataObject) -> None:
    indices = np.array(data.draw(st.lists(st.integers(-2, x.shape[0] + 2), min_size=1,
                                          max_size=5)), np.int32)
    expected = np.take(x, np.clip(indices, 0, x.shape[0] - 1), axis=0)
    numbers = GatherDimensionNumbers(offset_dims=tuple(range(1, x.ndim)),
                                     collapsed_slice_dims=(0,), start_index_map=(0,),
                                     index_vector_dim=1)
    result = run("gather", shape(expected), x, indices, gather_dimension_numbers=numbers,
                 gather_slice_sizes=(1, *x.shape[1:]))
    assert_same(result, expected)

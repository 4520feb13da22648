"""tensor: values never change once made; slices, reshapes, padding and concatenation."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run
from workbench.replay.errors import EvaluationError


def test_insert_leaves_its_operand_unchanged() -> None:
    text = """
    func.func @main(%t: tensor<3xf32>, %v: f32) -> (tensor<3xf32>, tensor<3xf32>, f32) {
      %c1 = arith.constant 1 : index
      %u = tensor.insert %v into %t[%c1] : tensor<3xf32>
      %e = tensor.extract %u[%c1] : tensor<3xf32>
      return %t, %u, %e : tensor<3xf32>, tensor<3xf32>, f32
    }"""
    original = np.array([1, 2, 3], np.float32)
    before, after, extracted = run(text, original, np.float32(-0.0))
    assert before.tolist() == [1, 2, 3]
    assert after[1] == 0 and np.signbit(after[1]) and np.signbit(extracted)


def test_extract_out_of_bounds_is_an_error() -> None:
    text = """
    func.func @main(%t: tensor<3xf32>, %i: index) -> f32 {
      %e = tensor.extract %t[%i] : tensor<3xf32>
      return %e : f32
    }"""
    with pytest.raises(EvaluationError, match="out of bounds"):
        run(text, np.zeros(3, np.float32), np.int64(3))


def test_slices_rank_reduction_and_insert_slice() -> None:
    text = """
    func.func @main(%t: tensor<4x6xi32>) -> (tensor<3xi32>, tensor<4x6xi32>) {
      %s = tensor.extract_slice %t[1, 0] [1, 3] [1, 2] : tensor<4x6xi32> to tensor<3xi32>
      %z = arith.constant dense<-1> : tensor<2x2xi32>
      %u = tensor.insert_slice %z into %t[2, 4] [2, 2] [1, 1] : tensor<2x2xi32> into tensor<4x6xi32>
      return %s, %u : tensor<3xi32>, tensor<4x6xi32>
    }"""
    values = np.arange(24, dtype=np.int32).reshape(4, 6)
    row, updated = run(text, values)
    assert row.tolist() == [6, 8, 10]
    expected = values.copy()
    expected[2:4, 4:6] = -1
    np.testing.assert_array_equal(updated, expected)
    assert values[2, 4] == 16  # the argument is untouched


def test_reshapes_concat_from_elements_splat_dim() -> None:
    text = """
    func.func @main(%t: tensor<2x3xf16>, %x: f16) -> (tensor<6xf16>, tensor<3x2xf16>,
        tensor<2x6xf16>, tensor<2xf16>, tensor<2x2xf16>, index) {
      %c0 = arith.constant 0 : index
      %flat = tensor.collapse_shape %t [[0, 1]] : tensor<2x3xf16> into tensor<6xf16>
      %back = tensor.expand_shape %flat [[0, 1]] output_shape [3, 2]
          : tensor<6xf16> into tensor<3x2xf16>
      %cat = tensor.concat dim(1) %t, %t : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x6xf16>
      %pair = tensor.from_elements %x, %x : tensor<2xf16>
      %splat = tensor.splat %x : tensor<2x2xf16>
      %d = tensor.dim %t, %c0 : tensor<2x3xf16>
      return %flat, %back, %cat, %pair, %splat, %d
          : tensor<6xf16>, tensor<3x2xf16>, tensor<2x6xf16>, tensor<2xf16>, tensor<2x2xf16>, index
    }"""
    values = np.array([[1, 2, 3], [4, 5, np.inf]], np.float16)
    flat, back, cat, pair, splat, dim = run(text, values, np.float16(65504))
    assert flat.dtype == np.float16 and flat.tolist() == [1, 2, 3, 4, 5, np.inf]
    assert back.shape == (3, 2)
    np.testing.assert_array_equal(cat, np.concatenate([values, values], axis=1))
    assert pair.tolist() == [65504, 65504] and splat.shape == (2, 2)
    assert int(dim) == 2


def test_pad_with_position_dependent_value() -> None:
    text = """
    func.func @main(%t: tensor<2xf32>) -> tensor<5xf32> {
      %p = tensor.pad %t low[1] high[2] {
      ^bb0(%i: index):
        %v = arith.index_cast %i : index to i32
        %f = arith.sitofp %v : i32 to f32
        tensor.yield %f : f32
      } : tensor<2xf32> to tensor<5xf32>
      return %p : tensor<5xf32>
    }"""
    result = run(text, np.array([np.nan, -0.0], np.float32))
    assert result[0] == 0 and np.isnan(result[1]) and np.signbit(result[2])
    assert result[3:].tolist() == [3.0, 4.0]


def test_empty_holds_poison() -> None:
    text = """
    func.func @main() -> tensor<2xf32> {
      %e = tensor.empty() : tensor<2xf32>
      return %e : tensor<2xf32>
    }"""
    assert np.isnan(run(text)).all()

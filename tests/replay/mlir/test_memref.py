"""memref: buffers as numpy views (writes through subviews and reshapes reach the buffer),
bounds checked, new buffers poisoned, the printed forms MLIR uses."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run
from workbench.replay.errors import EvaluationError


def test_alloc_in_both_printed_forms_holds_poison() -> None:
    text = """
    func.func @main() -> (memref<2xf32>, memref<2xi32>, memref<1xi1>) {
      %a = memref.alloc() alignment = 64 : memref<2xf32>
      %b = memref.alloc() {alignment = 64 : i64} : memref<2xi32>
      %c = memref.alloca() : memref<1xi1>
      return %a, %b, %c : memref<2xf32>, memref<2xi32>, memref<1xi1>
    }"""
    floats, integers, booleans = run(text)
    assert np.isnan(floats).all()
    assert (integers == np.int32(-1515870811)).all()  # 0xA5A5A5A5
    assert booleans.all()


def test_store_and_load_keep_nan_and_negative_zero() -> None:
    text = """
    func.func @main(%x: f32, %y: f32) -> memref<2xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = memref.alloc() : memref<2xf32>
      memref.store %x, %m[%c0] : memref<2xf32>
      memref.store %y, %m[%c1] : memref<2xf32>
      %v = memref.load %m[%c1] : memref<2xf32>
      memref.store %v, %m[%c0] : memref<2xf32>
      return %m : memref<2xf32>
    }"""
    nan = np.array(0x7FC00001, np.uint32).view(np.float32)
    result = run(text, np.float32(-0.0), nan)
    assert result.view(np.uint32).tolist() == [0x7FC00001, 0x7FC00001]


@pytest.mark.parametrize("index", [-1, 4])
def test_out_of_bounds_is_an_error(index: int) -> None:
    text = """
    func.func @main(%m: memref<4xf32>, %i: index) -> f32 {
      %v = memref.load %m[%i] : memref<4xf32>
      return %v : f32
    }"""
    with pytest.raises(EvaluationError, match="out of bounds"):
        run(text, np.zeros(4, np.float32), np.int64(index))


def test_subview_writes_through_to_the_buffer() -> None:
    text = """
    func.func @main(%m: memref<4x4xf32>, %v: f32) -> memref<4x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %sub = memref.subview %m[1, 2] [2, 2] [1, 1]
          : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 6>>
      memref.store %v, %sub[%c1, %c0] : memref<2x2xf32, strided<[4, 1], offset: 6>>
      %row = memref.subview %m[3, 0] [1, 2] [1, 2]
          : memref<4x4xf32> to memref<2xf32, strided<[2], offset: 12>>
      memref.store %v, %row[%c1] : memref<2xf32, strided<[2], offset: 12>>
      return %m : memref<4x4xf32>
    }"""
    result = run(text, np.zeros((4, 4), np.float32), np.float32(7))
    expected = np.zeros((4, 4), np.float32)
    expected[2, 2] = 7
    expected[3, 2] = 7  # the rank-reduced row view: element 1 is column 2
    np.testing.assert_array_equal(result, expected)


def test_subview_out_of_bounds_is_an_error() -> None:
    text = """
    func.func @main(%m: memref<4xf32>) -> memref<3xf32, strided<[1], offset: 2>> {
      %s = memref.subview %m[2] [3] [1] : memref<4xf32> to memref<3xf32, strided<[1], offset: 2>>
      return %s : memref<3xf32, strided<[1], offset: 2>>
    }"""
    with pytest.raises(EvaluationError, match="out of bounds"):
        run(text, np.zeros(4, np.float32))


def test_cast_copy_dim_and_reshapes() -> None:
    text = """
    func.func @main(%m: memref<2x3xi32>) -> (memref<6xi32>, index, memref<3x2xi32>, index) {
      %c1 = arith.constant 1 : index
      %r = memref.rank %m : memref<2x3xi32>
      %cast = memref.cast %m : memref<2x3xi32> to memref<?x3xi32>
      %d = memref.dim %cast, %c1 : memref<?x3xi32>
      %flat = memref.collapse_shape %m [[0, 1]] : memref<2x3xi32> into memref<6xi32>
      %other = memref.alloc() : memref<6xi32>
      memref.copy %flat, %other : memref<6xi32> to memref<6xi32>
      %back = memref.expand_shape %other [[0, 1]] output_shape [3, 2]
          : memref<6xi32> into memref<3x2xi32>
      return %flat, %d, %back, %r : memref<6xi32>, index, memref<3x2xi32>, index
    }"""
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    flat, dim, back, rank = run(text, values)
    assert int(rank) == 2
    assert flat.tolist() == list(range(6))
    assert int(dim) == 3
    assert back.tolist() == [[0, 1], [2, 3], [4, 5]]


def test_global_constant_is_read_only() -> None:
    text = """
    memref.global "private" constant @table : memref<2xi8> = dense<[127, -128]>
    func.func @main() -> i8 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %t = memref.get_global @table : memref<2xi8>
      %a = memref.load %t[%c0] : memref<2xi8>
      %b = memref.load %t[%c1] : memref<2xi8>
      %s = arith.addi %a, %b : i8
      %o = arith.addi %a, %a : i8
      %r = arith.addi %s, %o : i8
      return %r : i8
    }"""
    # -1 + (127 + 127 wraps to -2) = -3
    assert int(run(text)) == -3

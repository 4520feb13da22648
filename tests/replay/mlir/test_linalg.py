"""linalg: generic and named ops on tensors and memrefs. The vectorized engine must give the
same bits as the loop nest (the reference semantics), which every case here checks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run


@pytest.fixture(params=["vectorized", "elementwise"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each test with the vectorized path allowed, and with only the loop nest."""
    from workbench.replay.mlir.interpreters import structured

    if request.param == "elementwise":
        monkeypatch.setattr(structured, "_can_vectorize", lambda *args: False)
    return request.param


MATMUL_GENERIC = """
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
func.func @main(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%c : tensor<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}"""


def sequential_matmul(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    out = c.copy()
    for k in range(a.shape[1]):
        out = out + a[:, k : k + 1] * b[k : k + 1, :]
    return out


def test_generic_matmul_accumulates_in_loop_order(engine: str) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    c = rng.standard_normal((3, 4)).astype(np.float32)
    result = run(MATMUL_GENERIC, a, b, c)
    np.testing.assert_array_equal(result, sequential_matmul(a, b, c))


def test_named_matmul_equals_its_generic_form(engine: str) -> None:
    text = """
    func.func @main(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>)
        -> tensor<3x4xf32> {
      %r = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>)
                         outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
      return %r : tensor<3x4xf32>
    }"""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    c = np.full((3, 4), -0.0, np.float32)
    np.testing.assert_array_equal(run(text, a, b, c), run(MATMUL_GENERIC, a, b, c))


def test_matmul_casts_inputs_to_the_output_type(engine: str) -> None:
    text = """
    func.func @main(%a: tensor<1x2xi8>, %b: tensor<2x1xi8>, %c: tensor<1x1xi32>)
        -> tensor<1x1xi32> {
      %r = linalg.matmul ins(%a, %b : tensor<1x2xi8>, tensor<2x1xi8>)
                         outs(%c : tensor<1x1xi32>) -> tensor<1x1xi32>
      return %r : tensor<1x1xi32>
    }"""
    a = np.array([[127, -128]], np.int8)
    b = np.array([[127], [127]], np.int8)
    result = run(text, a, b, np.zeros((1, 1), np.int32))
    assert result.tolist() == [[127 * 127 - 128 * 127]]  # no i8 wraparound


def test_reduction_with_transposed_input_and_index(engine: str) -> None:
    text = """
    #in = affine_map<(d0, d1) -> (d1, d0)>
    #out = affine_map<(d0, d1) -> (d0)>
    func.func @main(%t: tensor<4x3xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
      %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
          ins(%t : tensor<4x3xf32>) outs(%init : tensor<3xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %i = linalg.index 1 : index
        %n = arith.index_cast %i : index to i32
        %w = arith.sitofp %n : i32 to f32
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      } -> tensor<3xf32>
      return %r : tensor<3xf32>
    }"""
    values = np.array([[1, np.nan, 3], [4, 5, 6], [7, 8, -0.0], [1e38, 1, 1]], np.float32)
    result = run(text, values, np.array([0, 0, -0.0], np.float32))
    weights = np.arange(4, dtype=np.float32)[:, None]
    expected = np.zeros(3, np.float32)
    expected[2] = -0.0
    for row in range(4):
        expected = expected + values[row] * weights[row]
    np.testing.assert_array_equal(result, expected)
    assert result[0] == np.float32(3e38) or np.isinf(result[0])


def test_broadcast_map_and_scalar_input(engine: str) -> None:
    text = """
    #row = affine_map<(d0, d1) -> (d1)>
    #scalar = affine_map<(d0, d1) -> ()>
    #id = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%v: tensor<3xi32>, %s: i32, %o: tensor<2x3xi32>) -> tensor<2x3xi32> {
      %r = linalg.generic {indexing_maps = [#row, #scalar, #id],
                           iterator_types = ["parallel", "parallel"]}
          ins(%v, %s : tensor<3xi32>, i32) outs(%o : tensor<2x3xi32>) {
      ^bb0(%x: i32, %y: i32, %out: i32):
        %a = arith.addi %x, %y : i32
        linalg.yield %a : i32
      } -> tensor<2x3xi32>
      return %r : tensor<2x3xi32>
    }"""
    vector = np.array([1, 2, 2147483647], np.int32)
    result = run(text, vector, np.int32(1), np.zeros((2, 3), np.int32))
    assert result.tolist() == [[2, 3, -2147483648]] * 2


def test_in_place_elementwise_on_memref(engine: str) -> None:
    text = """
    #id = affine_map<(d0) -> (d0)>
    func.func @main(%m: memref<4xf32>) -> memref<4xf32> {
      %c2 = arith.constant 2.0 : f32
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
          ins(%m : memref<4xf32>) outs(%m : memref<4xf32>) {
      ^bb0(%x: f32, %out: f32):
        %p = arith.mulf %x, %c2 : f32
        linalg.yield %p : f32
      }
      return %m : memref<4xf32>
    }"""
    result = run(text, np.array([1, -0.0, np.inf, 3e38], np.float32))
    assert result[0] == 2 and np.signbit(result[1]) and result[2] == np.inf and result[3] == np.inf


def test_shifted_in_place_update_follows_loop_order(engine: str) -> None:
    # out[i] = in[i - 1] + out[i] with in and out the same buffer: each step reads what the
    # previous iteration wrote (a prefix sum), which only the loop nest gets right.
    text = """
    #prev = affine_map<(d0) -> (d0)>
    #next = affine_map<(d0) -> (d0 + 1)>
    func.func @main(%m: memref<5xi32>) -> memref<5xi32> {
      %v = memref.subview %m[0] [4] [1] : memref<5xi32> to memref<4xi32, strided<[1]>>
      %w = memref.subview %m[1] [4] [1] : memref<5xi32> to memref<4xi32, strided<[1], offset: 1>>
      linalg.generic {indexing_maps = [#prev, #prev], iterator_types = ["parallel"]}
          ins(%v : memref<4xi32, strided<[1]>>) outs(%w : memref<4xi32, strided<[1], offset: 1>>) {
      ^bb0(%x: i32, %out: i32):
        %s = arith.addi %x, %out : i32
        linalg.yield %s : i32
      }
      return %m : memref<5xi32>
    }"""
    assert run(text, np.ones(5, np.int32)).tolist() == [1, 2, 3, 4, 5]


def test_named_ops(engine: str) -> None:
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>,
        tensor<2x3x4xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
      %e = tensor.empty() : tensor<2x3xf32>
      %sum = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>)
                        outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
      %et = tensor.empty() : tensor<3x2xf32>
      %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%et : tensor<3x2xf32>)
          permutation = [1, 0]
      %eb = tensor.empty() : tensor<2x3x4xf32>
      %bc = linalg.broadcast ins(%a : tensor<2x3xf32>) outs(%eb : tensor<2x3x4xf32>)
          dimensions = [2]
      %zero = arith.constant 0.0 : f32
      %er = tensor.empty() : tensor<2xf32>
      %init = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
      %red = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
        (%x: f32, %acc: f32) {
          %s = arith.addf %acc, %x : f32
          linalg.yield %s : f32
        }
      %cp = linalg.copy ins(%b : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
      %mx = linalg.max ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>)
                       outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
      return %sum, %t, %bc, %red, %cp, %mx
          : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3x4xf32>, tensor<2xf32>,
            tensor<2x3xf32>, tensor<2x3xf32>
    }"""
    a = np.array([[1, 2, 3], [-0.0, np.nan, 6]], np.float32)
    b = np.array([[10, 20, 30], [0.0, 1, 2]], np.float32)
    total, transposed, broadcast, reduced, copied, maximum = run(text, a, b)
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(transposed, a.T)
    np.testing.assert_array_equal(broadcast, np.broadcast_to(a[:, :, None], (2, 3, 4)))
    assert reduced[0] == 6 and np.isnan(reduced[1])
    np.testing.assert_array_equal(copied, b)
    assert maximum[0].tolist() == [10, 20, 30] and np.isnan(maximum[1, 1])


def test_fill_on_memref_and_empty_iteration_space(engine: str) -> None:
    text = """
    func.func @main(%m: memref<2x2xf16>, %z: memref<0x3xf32>) -> memref<2x2xf16> {
      %big = arith.constant 1.0e5 : f32
      %v = arith.truncf %big : f32 to f16
      linalg.fill ins(%v : f16) outs(%m : memref<2x2xf16>)
      %c = arith.constant 1.0 : f32
      linalg.fill ins(%c : f32) outs(%z : memref<0x3xf32>)
      return %m : memref<2x2xf16>
    }"""
    result = run(text, np.zeros((2, 2), np.float16), np.zeros((0, 3), np.float32))
    assert result.dtype == np.float16 and np.isinf(result).all()  # 1e5 overflows f16


def test_contraction_named_ops(engine: str) -> None:
    text = """
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4xf32>,
                    %v: tensor<4xf32>, %w: tensor<3xf32>)
        -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>) {
      %zero = arith.constant 0.0 : f32
      %e3 = tensor.empty() : tensor<2x3x5xf32>
      %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      %bm = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
                                outs(%z3 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      %e1 = tensor.empty() : tensor<3xf32>
      %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
      %mv = linalg.matvec ins(%m, %v : tensor<3x4xf32>, tensor<4xf32>)
                          outs(%z1 : tensor<3xf32>) -> tensor<3xf32>
      %e2 = tensor.empty() : tensor<4xf32>
      %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
      %vm = linalg.vecmat ins(%w, %m : tensor<3xf32>, tensor<3x4xf32>)
                          outs(%z2 : tensor<4xf32>) -> tensor<4xf32>
      %e0 = tensor.empty() : tensor<f32>
      %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
      %d = linalg.dot ins(%v, %v : tensor<4xf32>, tensor<4xf32>)
                      outs(%z0 : tensor<f32>) -> tensor<f32>
      return %bm, %mv, %vm, %d : tensor<2x3x5xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>
    }"""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    m = rng.standard_normal((3, 4)).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    batched, matvec, vecmat, dot = run(text, a, b, m, v, w)
    np.testing.assert_allclose(batched, a @ b, rtol=1e-5)
    np.testing.assert_allclose(matvec, m @ v, rtol=1e-5)
    np.testing.assert_allclose(vecmat, w @ m, rtol=1e-5)
    np.testing.assert_allclose(dot, v @ v, rtol=1e-5)


def test_matmul_with_indexing_maps_transposes(engine: str) -> None:
    text = """
    func.func @main(%a: tensor<5x3xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>)
        -> tensor<3x4xf32> {
      %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                          affine_map<(d0, d1, d2) -> (d2, d1)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1)>]
          ins(%a, %b : tensor<5x3xf32>, tensor<5x4xf32>) outs(%c : tensor<3x4xf32>)
          -> tensor<3x4xf32>
      return %r : tensor<3x4xf32>
    }"""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        run(text, a, b, np.zeros((3, 4), np.float32)),
        sequential_matmul(a.T.copy(), b, np.zeros((3, 4), np.float32)),
    )

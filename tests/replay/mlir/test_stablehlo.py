"""StableHLO in the syntax JAX prints: elementwise ops with NaN, -0.0 and overflow, XLA's
integer and conversion semantics, shape ops, dot_general, reductions, sort, gather, scatter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run

NAN = float("nan")


def elementwise(op: str, type_: str, *values: object) -> object:
    names = ", ".join(f"%a{i}" for i in range(len(values)))
    params = ", ".join(f"%a{i}: {type_}" for i in range(len(values)))
    text = f"""
    func.func @main({params}) -> {type_} {{
      %0 = {op} {names} : {type_}
      return %0 : {type_}
    }}"""
    return run(text, *values)


@pytest.mark.parametrize(
    ("op", "lhs", "rhs", "expected"),
    [
        ("stablehlo.add", 16777216.0, 1.0, 16777216.0),
        ("stablehlo.multiply", -0.0, 3.0, -0.0),
        ("stablehlo.divide", 1.0, 0.0, math.inf),
        ("stablehlo.remainder", -7.5, 2.0, -1.5),
        ("stablehlo.maximum", NAN, 1.0, NAN),
        ("stablehlo.maximum", -0.0, 0.0, 0.0),
        ("stablehlo.minimum", 0.0, -0.0, -0.0),
        ("stablehlo.power", -8.0, 1.0 / 3.0, NAN),
        ("stablehlo.atan2", -0.0, -1.0, -math.pi),
    ],
)
def test_float_binary(op: str, lhs: float, rhs: float, expected: float) -> None:
    result = elementwise(op, "tensor<f32>", np.float32(lhs), np.float32(rhs))
    assert result.dtype == np.float32
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)
        assert bool(np.signbit(result)) == (math.copysign(1.0, expected) < 0)


@pytest.mark.parametrize(
    ("op", "type_", "lhs", "rhs", "expected"),
    [
        ("stablehlo.add", "tensor<i32>", 2147483647, 1, -2147483648),
        ("stablehlo.multiply", "tensor<ui8>", 16, 17, 16),
        ("stablehlo.divide", "tensor<i32>", -7, 2, -3),
        ("stablehlo.divide", "tensor<i32>", 5, 0, -1),  # XLA: x / 0 = -1
        ("stablehlo.divide", "tensor<ui32>", 5, 0, 4294967295),
        ("stablehlo.divide", "tensor<i32>", -2147483648, -1, -2147483648),
        ("stablehlo.remainder", "tensor<i32>", -7, 2, -1),
        ("stablehlo.remainder", "tensor<i32>", 5, 0, 5),  # XLA: x % 0 = x
        ("stablehlo.remainder", "tensor<i32>", -2147483648, -1, 0),
        ("stablehlo.shift_left", "tensor<i32>", 1, 32, 0),
        ("stablehlo.shift_right_arithmetic", "tensor<i32>", -8, 40, -1),
        ("stablehlo.shift_right_logical", "tensor<i32>", -8, 28, 15),
        ("stablehlo.shift_right_logical", "tensor<ui32>", 4294967288, 1, 2147483644),
        ("stablehlo.power", "tensor<i32>", 2, -1, 0),
        ("stablehlo.power", "tensor<i32>", -1, -3, -1),
        ("stablehlo.and", "tensor<i32>", 12, 10, 8),
        ("stablehlo.xor", "tensor<ui32>", 4294967295, 1, 4294967294),
        ("stablehlo.maximum", "tensor<ui32>", 4294967295, 1, 4294967295),
    ],
)
def test_integer_binary(op: str, type_: str, lhs: int, rhs: int, expected: int) -> None:
    dtype = np.dtype(("uint" if "ui" in type_ else "int") + type_.split("i")[-1].rstrip(">"))
    result = elementwise(op, type_, np.array(lhs, dtype), np.array(rhs, dtype))
    assert result.dtype == dtype
    assert int(result) == expected


def test_boolean_ops() -> None:
    t, f = np.bool_(True), np.bool_(False)
    assert bool(elementwise("stablehlo.add", "tensor<i1>", t, t)) is True  # logical or
    assert bool(elementwise("stablehlo.not", "tensor<i1>", t)) is False
    assert int(elementwise("stablehlo.not", "tensor<i32>", np.int32(0))) == -1
    assert bool(elementwise("stablehlo.and", "tensor<i1>", t, f)) is False


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("stablehlo.sign", -0.0, -0.0),
        ("stablehlo.sign", NAN, NAN),
        ("stablehlo.sign", -3.0, -1.0),
        ("stablehlo.round_nearest_afz", -2.5, -3.0),
        ("stablehlo.round_nearest_even", -2.5, -2.0),
        ("stablehlo.rsqrt", 0.25, 2.0),
        ("stablehlo.logistic", 0.0, 0.5),
        ("stablehlo.exponential", 100.0, math.inf),
        ("stablehlo.log_plus_one", -1.0, -math.inf),
        ("stablehlo.negate", 0.0, -0.0),
        ("stablehlo.abs", -math.inf, math.inf),
        ("stablehlo.tanh", NAN, NAN),
        ("stablehlo.floor", -0.5, -1.0),
    ],
)
def test_float_unary(op: str, value: float, expected: float) -> None:
    result = elementwise(op, "tensor<f32>", np.float32(value))
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)
        assert bool(np.signbit(result)) == (math.copysign(1.0, expected) < 0)


def test_is_finite_popcnt_clz() -> None:
    text = """
    func.func @main(%f: tensor<3xf32>, %i: tensor<2xi32>)
        -> (tensor<3xi1>, tensor<2xi32>, tensor<2xi32>) {
      %0 = stablehlo.is_finite %f : (tensor<3xf32>) -> tensor<3xi1>
      %1 = stablehlo.popcnt %i : tensor<2xi32>
      %2 = stablehlo.count_leading_zeros %i : tensor<2xi32>
      return %0, %1, %2 : tensor<3xi1>, tensor<2xi32>, tensor<2xi32>
    }"""
    finite, population, zeros = run(text, np.array([1, np.inf, np.nan], np.float32),
                                    np.array([-1, 1], np.int32))
    assert finite.tolist() == [True, False, False]
    assert population.tolist() == [32, 1] and zeros.tolist() == [0, 31]


@pytest.mark.parametrize(
    ("source", "target", "value", "expected"),
    [
        ("f32", "i32", 1e10, 2147483647),  # XLA saturates
        ("f32", "i32", -1e10, -2147483648),
        ("f32", "i32", NAN, 0),
        ("f32", "i32", -2.9, -2),
        ("f32", "ui8", -3.0, 0),
        ("i32", "f32", 16777217, 16777216.0),  # rounds to nearest even
        ("f32", "i1", -0.0, False),
        ("f32", "i1", NAN, True),
        ("i1", "f32", True, 1.0),
        ("i32", "i8", 300, 44),
        ("f32", "bf16", 1.00390625, 1.0),
        ("f32", "f16", 70000.0, math.inf),
    ],
)
def test_convert(source: str, target: str, value: object, expected: object) -> None:
    dtypes = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}
    text = f"""
    func.func @main(%a: tensor<{source}>) -> tensor<{target}> {{
      %0 = stablehlo.convert %a : (tensor<{source}>) -> tensor<{target}>
      return %0 : tensor<{target}>
    }}"""
    result = run(text, np.array(value, dtypes[source]))
    if isinstance(expected, bool):
        assert bool(result) is expected
    else:
        assert float(result) == expected


def test_bitcast_convert_and_compare_total_order() -> None:
    text = """
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi32>) {
      %0 = stablehlo.compare  LT, %a, %b,  TOTALORDER
          : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %1 = stablehlo.compare  LT, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %2 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4xi32>
      return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi32>
    }"""
    a = np.array([-0.0, -np.inf, 1, np.nan], np.float32)
    b = np.array([0.0, -np.nan, 2, np.inf], np.float32)
    total, ieee, bits = run(text, a, b)
    assert total.tolist() == [True, False, True, False]  # -NaN < -inf; +NaN > +inf
    assert ieee.tolist() == [False, False, True, False]
    assert bits[0] == np.int32(-2147483648)


def test_generic_form_compare_and_select() -> None:
    text = """
    func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
      %p = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction GT>,
                                         compare_type = #stablehlo<comparison_type UNSIGNED>}>
          : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
      %r = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xi32>
      return %r : tensor<3xi32>
    }"""
    result = run(text, np.array([-1, 1, 5], np.int32), np.array([1, 2, 5], np.int32))
    assert result.tolist() == [-1, 2, 5]  # -1 is the largest unsigned


def test_shape_ops() -> None:
    text = """
    func.func @main(%a: tensor<2x3xf32>, %s: tensor<f32>) -> (tensor<3x2x4xf32>, tensor<3x2xf32>,
        tensor<6xf32>, tensor<2x2xf32>, tensor<4x3xf32>, tensor<4x6xf32>, tensor<2x3xf32>,
        tensor<2x3xf32>, tensor<3x2xi32>) {
      %b = stablehlo.broadcast_in_dim %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2x4xf32>
      %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %r = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
      %sl = stablehlo.slice %a [0:2, 0:3:2] : (tensor<2x3xf32>) -> tensor<2x2xf32>
      %c = stablehlo.concatenate %a, %a, dim = 0
          : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      %p = stablehlo.pad %a, %s, low = [1, -1], high = [1, 2], interior = [0, 1]
          : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
      %rv = stablehlo.reverse %a, dims = [1] : tensor<2x3xf32>
      %cl = stablehlo.clamp %s, %a, %s
          : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
      %io = stablehlo.iota dim = 0 : tensor<3x2xi32>
      return %b, %t, %r, %sl, %c, %p, %rv, %cl, %io : tensor<3x2x4xf32>, tensor<3x2xf32>,
          tensor<6xf32>, tensor<2x2xf32>, tensor<4x3xf32>, tensor<4x6xf32>, tensor<2x3xf32>,
          tensor<2x3xf32>, tensor<3x2xi32>
    }"""
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b, t, r, sl, c, p, rv, cl, io = run(text, a, np.float32(-0.0))
    np.testing.assert_array_equal(b, np.broadcast_to(a.T[:, :, None], (3, 2, 4)))
    np.testing.assert_array_equal(t, a.T)
    assert r.tolist() == [1, 2, 3, 4, 5, 6]
    assert sl.tolist() == [[1, 3], [4, 6]]
    np.testing.assert_array_equal(c, np.concatenate([a, a]))
    interior = np.array([[1, 0, 2, 0, 3], [4, 0, 5, 0, 6]], np.float32)
    expected = np.zeros((4, 7), np.float32)
    expected[1:3, :5] = interior
    np.testing.assert_array_equal(p, expected[:, 1:])
    np.testing.assert_array_equal(rv, a[:, ::-1])
    assert (cl == 0).all() and np.signbit(cl).all()
    assert io.tolist() == [[0, 0], [1, 1], [2, 2]]


def test_dot_general_with_batch_and_dot() -> None:
    text = """
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %v: tensor<4xf32>)
        -> (tensor<2x3x5xf32>, tensor<2x3xf32>) {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
          precision = [DEFAULT, DEFAULT]
          : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      %1 = stablehlo.dot_general %a, %v, contracting_dims = [2] x [0]
          : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
      return %0, %1 : tensor<2x3x5xf32>, tensor<2x3xf32>
    }"""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    batched, vector = run(text, a, b, v)
    np.testing.assert_allclose(batched, np.einsum("bij,bjk->bik", a, b), rtol=1e-6)
    np.testing.assert_allclose(vector, a @ v, rtol=1e-6)


def test_dot_with_integer_wraparound() -> None:
    text = """
    func.func @main(%a: tensor<1x2xi8>, %b: tensor<2x1xi8>) -> tensor<1x1xi8> {
      %0 = stablehlo.dot %a, %b, precision = [DEFAULT, DEFAULT]
          : (tensor<1x2xi8>, tensor<2x1xi8>) -> tensor<1x1xi8>
      return %0 : tensor<1x1xi8>
    }"""
    result = run(text, np.array([[100, 100]], np.int8), np.array([[2], [1]], np.int8))
    assert result.tolist() == [[np.int8(300 - 256)]]


def test_reduce_compact_region_and_variadic_forms() -> None:
    text = """
    func.func @main(%a: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<3xf32>, tensor<2xf32>,
        tensor<2xf32>, tensor<2xi32>) {
      %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %zi = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
          : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
      %1 = stablehlo.reduce(%a init: %ninf) across dimensions = [1]
          : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
       reducer(%x: tensor<f32>, %y: tensor<f32>)  {
        %m = stablehlo.maximum %x, %y : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }
      %2:2 = stablehlo.reduce(%a init: %ninf), (%i init: %zi) across dimensions = [1]
          : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>)
          -> (tensor<2xf32>, tensor<2xi32>)
       reducer(%x: tensor<f32>, %y: tensor<f32>) (%xi: tensor<i32>, %yi: tensor<i32>)  {
        %gt = stablehlo.compare  GT, %y, %x,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %m = stablehlo.select %gt, %y, %x : tensor<i1>, tensor<f32>
        %k = stablehlo.select %gt, %yi, %xi : tensor<i1>, tensor<i32>
        stablehlo.return %m, %k : tensor<f32>, tensor<i32>
      }
      return %0, %1, %2#0, %2#1 : tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
    }"""
    a = np.array([[1, 7, -0.0], [5, np.nan, -0.0]], np.float32)
    index = np.tile(np.arange(3, dtype=np.int32), (2, 1))
    total, maximum, arg_values, arg_index = run(text, a, index)
    assert total[0] == 6 and np.isnan(total[1]) and total[2] == 0
    assert maximum[0] == 7 and np.isnan(maximum[1])
    assert arg_values.tolist() == [7, 5] and arg_index.tolist() == [1, 0]


def test_reduce_window_cumulative_sum() -> None:
    text = """
    func.func @main(%a: tensor<5xi32>) -> tensor<5xi32> {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %0 = "stablehlo.reduce_window"(%a, %c) <{padding = dense<[[4, 0]]> : tensor<1x2xi64>,
          window_dimensions = array<i64: 5>, window_strides = array<i64: 1>}> ({
      ^bb0(%x: tensor<i32>, %y: tensor<i32>):
        %s = stablehlo.add %x, %y : tensor<i32>
        stablehlo.return %s : tensor<i32>
      }) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
      return %0 : tensor<5xi32>
    }"""
    values = np.array([1, 2, 3, 2147483647, 1], np.int32)
    result = run(text, values)
    assert result.tolist() == np.cumsum(values, dtype=np.int32).tolist()


def test_sort_stable_with_total_order_and_custom_comparator() -> None:
    text = """
    func.func @main(%k: tensor<5xf32>, %v: tensor<5xi32>)
        -> (tensor<5xf32>, tensor<5xi32>, tensor<5xi32>) {
      %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
        %lt = stablehlo.compare  LT, %a, %b,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      }) : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
      %1 = "stablehlo.sort"(%v) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %na = stablehlo.negate %a : tensor<i32>
        %nb = stablehlo.negate %b : tensor<i32>
        %lt = stablehlo.compare  LT, %na, %nb,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      }) : (tensor<5xi32>) -> tensor<5xi32>
      return %0#0, %0#1, %1 : tensor<5xf32>, tensor<5xi32>, tensor<5xi32>
    }"""
    keys = np.array([2, np.nan, -0.0, 0.0, -np.inf], np.float32)
    values = np.arange(5, dtype=np.int32)
    sorted_keys, order, descending = run(text, keys, values)
    assert order.tolist() == [4, 2, 3, 0, 1]  # -inf, -0.0, 0.0, 2, NaN
    assert np.signbit(sorted_keys[1]) and np.isnan(sorted_keys[4])
    assert descending.tolist() == [4, 3, 2, 1, 0]


def test_gather_and_scatter_in_generic_form() -> None:
    text = """
    func.func @main(%table: tensor<4x3xf32>, %rows: tensor<2x1xi32>, %upd: tensor<2x3xf32>)
        -> (tensor<2x3xf32>, tensor<4x3xf32>) {
      %g = "stablehlo.gather"(%table, %rows) <{dimension_numbers = #stablehlo.gather<
          offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],
          index_vector_dim = 1>,
          indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}>
          : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
      %s = "stablehlo.scatter"(%table, %rows, %upd) <{indices_are_sorted = false,
          scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
          inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          unique_indices = false}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %sum = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %sum : tensor<f32>
      }) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      return %g, %s : tensor<2x3xf32>, tensor<4x3xf32>
    }"""
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    rows = np.array([[3], [7]], np.int32)  # 7 is clamped to 3 by gather, skipped by scatter
    updates = np.ones((2, 3), np.float32)
    gathered, scattered = run(text, table, rows, updates)
    np.testing.assert_array_equal(gathered, table[[3, 3]])
    expected = table.copy()
    expected[3] += 1
    np.testing.assert_array_equal(scattered, expected)


def test_while_and_calls() -> None:
    text = """
    module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
      func.func public @main(%x: tensor<f32> {jax.result_info = "result"}) -> (tensor<f32>) {
        %c = stablehlo.constant dense<0> : tensor<i32>
        %c3 = stablehlo.constant dense<3> : tensor<i32>
        %0:2 = stablehlo.while(%i = %c, %acc = %x) : tensor<i32>, tensor<f32>
         cond {
          %lt = stablehlo.compare  LT, %i, %c3,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %n = stablehlo.add %i, %one : tensor<i32>
          %d = func.call @double(%acc) : (tensor<f32>) -> tensor<f32>
          stablehlo.return %n, %d : tensor<i32>, tensor<f32>
        }
        return %0#1 : tensor<f32>
      }
      func.func private @double(%y: tensor<f32>) -> tensor<f32> {
        %0 = stablehlo.add %y, %y : tensor<f32>
        return %0 : tensor<f32>
      }
    }"""
    assert run(text, np.float32(1.5)) == 12.0
    assert run(text, np.float32(3e38)) == np.inf

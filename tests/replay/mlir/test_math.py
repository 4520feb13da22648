"""math: functions in the operands' element type, NaN/inf/-0.0 behaviour, integer ops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.mlir_snippets import binary, run, unary

NAN = float("nan")


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("math.tanh", 20.0, 1.0),
        ("math.tanh", -0.0, -0.0),
        ("math.tanh", NAN, NAN),
        ("math.exp", 89.0, math.inf),  # overflows f32, not f64
        ("math.exp", -math.inf, 0.0),
        ("math.log", 0.0, -math.inf),
        ("math.log", -1.0, NAN),
        ("math.sqrt", -0.0, -0.0),
        ("math.rsqrt", 4.0, 0.5),
        ("math.rsqrt", 0.0, math.inf),
        ("math.absf", -0.0, 0.0),
        ("math.floor", -0.5, -1.0),
        ("math.ceil", -0.5, -0.0),
        ("math.round", 2.5, 3.0),  # half away from zero
        ("math.round", -2.5, -3.0),
        ("math.round", 0.49999997, 0.0),
        ("math.roundeven", 2.5, 2.0),
        ("math.trunc", -1.7, -1.0),
        ("math.erf", 0.5, 0.5204998778130465),
        ("math.expm1", 1e-10, 1e-10),
        ("math.log1p", -1.0, -math.inf),
        ("math.cbrt", -8.0, -2.0),
    ],
)
def test_float_functions(op: str, value: float, expected: float) -> None:
    result = unary(op, "f32", np.float32(value))
    assert result.dtype == np.float32
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)
        assert bool(np.signbit(result)) == (math.copysign(1.0, expected) < 0)


def test_f16_functions_round_to_f16() -> None:
    result = unary("math.exp", "f16", np.float16(1.0))
    assert result.dtype == np.float16
    assert result == np.float16(np.e)
    assert unary("math.exp", "f16", np.float16(12.0)) == np.inf  # 162754 > f16 max


@pytest.mark.parametrize(
    ("op", "lhs", "rhs", "expected"),
    [
        ("math.powf", 2.0, 0.5, math.sqrt(2.0)),
        ("math.powf", -8.0, 1.0 / 3.0, NAN),
        ("math.atan2", 0.0, -1.0, math.pi),
        ("math.atan2", -0.0, -1.0, -math.pi),
        ("math.copysign", 3.0, -0.0, -3.0),
    ],
)
def test_float_binary(op: str, lhs: float, rhs: float, expected: float) -> None:
    result = binary(op, "f32", np.float32(lhs), np.float32(rhs))
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("math.absi", -2147483648, -2147483648),  # wraps
        ("math.ctlz", 1, 31),
        ("math.ctlz", 0, 32),
        ("math.ctlz", -1, 0),
        ("math.cttz", 8, 3),
        ("math.cttz", 0, 32),
        ("math.ctpop", -1, 32),
        ("math.ctpop", 0x0F0F, 8),
    ],
)
def test_integer_functions(op: str, value: int, expected: int) -> None:
    result = unary(op, "i32", np.int32(value))
    assert result.dtype == np.int32
    assert int(result) == expected


@pytest.mark.parametrize(
    ("base", "exponent", "expected"),
    [(3, 4, 81), (2, 31, -2147483648), (2, -1, 0), (1, -5, 1), (-1, -3, -1), (-1, -2, 1)],
)
def test_ipowi(base: int, exponent: int, expected: int) -> None:
    assert int(binary("math.ipowi", "i32", np.int32(base), np.int32(exponent))) == expected


def test_fma_rounds_once() -> None:
    text = """
    func.func @main(%a: f32, %b: f32, %c: f32) -> f32 {
      %0 = math.fma %a, %b, %c : f32
      return %0 : f32
    }"""
    a = np.float32(1.0 + 2.0**-12)
    # a*a - (1 + 2**-11) is 2**-24 exactly; rounding a*a to f32 first would lose it.
    result = run(text, a, a, np.float32(-(1.0 + 2.0**-11)))
    assert result == np.float32(2.0**-24)


def test_math_on_tensors() -> None:
    text = """
    func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = math.tanh %a : tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    }"""
    values = np.array([[0.5, -1.0], [np.inf, np.nan]], np.float32)
    result = run(text, values)
    np.testing.assert_array_equal(result, np.tanh(values))

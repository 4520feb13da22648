"""Elementwise ops against hand-checked values (edge cases checked on XLA's CPU backend)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, element_type, run
from workbench.replay.errors import Unsupported

NAN = np.nan
INF = np.inf
f32 = np.float32
s32 = np.int32
u32 = np.uint32
s8 = np.int8
u8 = np.uint8
bf16 = ml_dtypes.bfloat16
f16 = np.float16
I32_MIN = -(2**31)
I32_MAX = 2**31 - 1


def a(values: list, dtype: type) -> np.ndarray:
    return np.array(values, dtype=dtype)


@pytest.mark.parametrize(("opcode", "dtype", "lhs", "rhs", "expected"), [
    ("add", f32, [1.5, -0.0, INF, INF, NAN], [2.25, -0.0, -INF, 1, 1], [3.75, -0.0, NAN, INF, NAN]),
    ("add", s32, [I32_MAX, I32_MIN, 5], [1, -1, -7], [I32_MIN, I32_MAX, -2]),
    ("add", u8, [255, 1], [1, 2], [0, 3]),
    ("add", bool, [True, True, False], [True, False, False], [True, True, False]),
    ("subtract", f32, [0.0, 1.0], [0.0, INF], [0.0, -INF]),
    ("subtract", u32, [0, 5], [1, 3], [4294967295, 2]),
    ("subtract", bool, [True, True, False, False], [True, False, True, False],
     [False, True, True, False]),
    ("multiply", f32, [-0.0, 0.0, INF, 3.0], [5.0, -2.0, 0.0, -0.5], [-0.0, -0.0, NAN, -1.5]),
    ("multiply", s8, [100, -128, 16], [3, -1, 16], [44, -128, 0]),
    ("divide", f32, [1.0, -1.0, 0.0, 7.0], [0.0, 0.0, 0.0, -2.0], [INF, -INF, NAN, -3.5]),
    ("divide", s32, [7, -7, 7, -7, I32_MIN, I32_MIN, 5, 0],
     [2, 2, -2, -2, -1, 0, 0, 0], [3, -3, -3, 3, I32_MIN, -1, -1, -1]),
    ("divide", u32, [7, 0, 5], [0, 0, 2], [4294967295, 4294967295, 2]),
    ("remainder", s32, [7, -7, 7, -7, I32_MIN, I32_MIN, 5, 0],
     [2, 2, -2, -2, -1, 0, 0, 0], [1, -1, 1, -1, 0, I32_MIN, 5, 0]),
    ("remainder", u32, [7, 0, 5], [0, 0, 2], [7, 0, 1]),
    ("remainder", f32, [5.5, -5.5, 1.0, INF, 3.0], [2.0, 2.0, 0.0, 2.0, INF],
     [1.5, -1.5, NAN, NAN, 3.0]),
    ("maximum", f32, [-0.0, 0.0, -0.0, NAN, 1.0, 2.0], [0.0, -0.0, -0.0, 1.0, NAN, -3.0],
     [0.0, 0.0, -0.0, NAN, NAN, 2.0]),
    ("minimum", f32, [-0.0, 0.0, 0.0, NAN, 1.0], [0.0, -0.0, 0.0, 1.0, NAN],
     [-0.0, -0.0, 0.0, NAN, NAN]),
    ("maximum", s32, [I32_MIN, 3], [0, -3], [0, 3]),
    ("maximum", bf16, [1.5, NAN], [2.5, 0], [2.5, NAN]),
    ("power", s32, [2, -1, -1, 1, 2, 0, -1, 3, -2], [-1, -1, -2, -3, 31, 0, 3, 20, -1],
     [0, -1, 1, 1, I32_MIN, 1, -1, -808182895, 0]),
    ("power", f32, [2.0, NAN, 1.0, -8.0], [0.5, 0.0, NAN, 1 / 3], [np.sqrt(f32(2)), 1.0, 1.0, NAN]),
    ("atan2", f32, [0.0, -0.0, 1.0], [-1.0, -1.0, 0.0], [np.pi, -np.pi, np.pi / 2]),
    ("and", s32, [0b1100, -1], [0b1010, 5], [0b1000, 5]),
    ("or", u8, [0b1100, 0], [0b1010, 0], [0b1110, 0]),
    ("xor", bool, [True, True, False], [True, False, False], [False, True, False]),
    ("xor", u32, [0xFFFFFFFF, 0x0F0F0F0F], [0x0F0F0F0F, 0x0F0F0F0F], [0xF0F0F0F0, 0]),
    ("shift-left", s32, [1, -8, 1, -8, 1, 3], [31, 31, 32, 32, -1, 1], [I32_MIN, 0, 0, 0, 0, 6]),
    ("shift-right-arithmetic", s32, [1, -8, 1, -8, 1, -8, 3], [31, 31, 32, 32, -1, 40, 1],
     [0, -1, 0, -1, 0, -1, 1]),
    ("shift-right-logical", s32, [1, -8, 1, -8, 1, -8, 3], [31, 31, 32, 32, -1, 40, 1],
     [0, 1, 0, 0, 0, 0, 1]),
    ("shift-right-arithmetic", u8, [0x80, 0x80, 0x40], [1, 9, 1], [0xC0, 0xFF, 0x20]),
    ("shift-right-logical", u8, [0x80, 0x80], [7, 8], [1, 0]),
])
def test_binary(opcode: str, dtype: type, lhs: list, rhs: list, expected: list) -> None:
    assert_same(run(opcode, _type(dtype), a(lhs, dtype), a(rhs, dtype)), a(expected, dtype))


def _type(dtype: type) -> str:
    return element_type(np.dtype(dtype))


@pytest.mark.parametrize(("opcode", "dtype", "operand", "expected"), [
    ("abs", f32, [-0.0, -INF, NAN, -2.5], [0.0, INF, NAN, 2.5]),
    ("abs", s8, [-128, -3, 5], [-128, 3, 5]),
    ("negate", s32, [I32_MIN, 5, 0], [I32_MIN, -5, 0]),
    ("negate", f32, [0.0, -0.0, INF], [-0.0, 0.0, -INF]),
    ("negate", u8, [1, 0], [255, 0]),
    ("sign", f32, [-0.0, 0.0, NAN, -3.0, 2.0, -INF], [-0.0, 0.0, NAN, -1.0, 1.0, -1.0]),
    ("sign", s32, [I32_MIN, 0, 7], [-1, 0, 1]),
    ("not", bool, [True, False], [False, True]),
    ("not", s32, [0, -1, 5], [-1, 0, -6]),
    ("floor", f32, [-0.5, 1.5, -0.0, NAN], [-1.0, 1.0, -0.0, NAN]),
    ("ceil", f32, [-0.5, 1.5, INF], [-0.0, 2.0, INF]),
    ("round-nearest-afz", f32, [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0, NAN],
     [1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -0.0, NAN]),
    ("round-nearest-even", f32, [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0, NAN],
     [0.0, 2.0, 2.0, -0.0, -2.0, 0.0, -0.0, NAN]),
    ("sqrt", f32, [4.0, -1.0, -0.0, INF], [2.0, NAN, -0.0, INF]),
    ("rsqrt", f32, [4.0, 0.0, -0.0, INF], [0.5, INF, -INF, 0.0]),
    ("cbrt", f32, [-8.0, 27.0], [-2.0, 3.0]),
    ("exponential", f32, [0.0, -INF, INF, NAN], [1.0, 0.0, INF, NAN]),
    ("exponential-minus-one", f32, [0.0, -0.0, -INF], [0.0, -0.0, -1.0]),
    ("log", f32, [1.0, 0.0, -1.0, INF], [0.0, -INF, NAN, INF]),
    ("log-plus-one", f32, [0.0, -0.0, -1.0, -2.0], [0.0, -0.0, -INF, NAN]),
    ("logistic", f32, [0.0, INF, -INF], [0.5, 1.0, 0.0]),
    ("sine", f32, [0.0, -0.0, INF], [0.0, -0.0, NAN]),
    ("cosine", f32, [0.0, NAN], [1.0, NAN]),
    ("tan", f32, [0.0, -0.0], [0.0, -0.0]),
    ("tanh", f32, [0.0, -0.0, INF, -INF], [0.0, -0.0, 1.0, -1.0]),
    ("erf", f32, [0.0, -0.0, INF, -INF, NAN], [0.0, -0.0, 1.0, -1.0, NAN]),
    ("popcnt", s32, [-1, 0, 7, I32_MIN], [32, 0, 3, 1]),
    ("count-leading-zeros", s32, [-1, 0, 1, 2**30], [0, 32, 31, 1]),
    ("count-leading-zeros", u8, [0, 1, 128, 255], [8, 7, 0, 0]),
    ("real", f32, [1.5, -0.0], [1.5, -0.0]),
    ("imag", f32, [1.5, -0.0], [0.0, 0.0]),
    ("sqrt", f16, [2.0, -1.0], [1.414, NAN]),
    ("exponential", bf16, [1.0, 0.0], [2.71875, 1.0]),
])
def test_unary(opcode: str, dtype: type, operand: list, expected: list) -> None:
    assert_same(run(opcode, _type(dtype), a(operand, dtype)), a(expected, dtype))


def test_bit_counts_of_scalars() -> None:
    """A 0-d operand (`jnp.bitwise_count` of a scalar): numpy cannot view it as bytes."""
    assert_same(run("popcnt", "s32", np.array(-1, np.int32)), np.array(32, np.int32))
    assert_same(run("popcnt", "u64", np.array(2**63 + 1, np.uint64)), np.array(2, np.uint64))
    assert_same(run("count-leading-zeros", "s32", np.array(1, np.int32)), np.array(31, np.int32))


def test_unary_on_complex() -> None:
    z = np.array([3 + 4j, complex(-0.0, 0.0)], np.complex64)
    assert_same(run("abs", "f32", z), a([5.0, 0.0], f32))
    assert_same(run("real", "f32", z), a([3.0, -0.0], f32))
    assert_same(run("imag", "f32", z), a([4.0, 0.0], f32))
    assert_same(run("sign", "c64", z), np.array([0.6 + 0.8j, 0j], np.complex64))
    assert_same(run("complex", "c64", a([1.0, -0.0], f32), a([INF, 2.0], f32)),
                np.array([complex(1, np.inf), complex(-0.0, 2)], np.complex64))


def test_narrow_floats_round_each_op_from_f32() -> None:
    # 2049 is not an f16: 2048 + 1 rounds to even (2048) after the f32 add.
    assert_same(run("add", "f16", a([2048.0], f16), a([1.0], f16)), a([2048.0], f16))
    assert_same(run("multiply", "bf16", a([1.0078125], bf16), a([1.0078125], bf16)),
                a([1.015625], bf16))


def _narrow_sample(dtype: type, count: int) -> np.ndarray:
    """`count` values of a 16-bit float type: zeros, infinities, NaN, the extremes, the smallest
    subnormals, and random bit patterns (every exponent, subnormals included)."""
    info = ml_dtypes.finfo(dtype)
    edges = np.array([0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, float(info.max), -float(info.max),
                      float(info.smallest_subnormal), -float(info.smallest_subnormal),
                      float(info.smallest_normal)]).astype(dtype)
    bits = np.random.default_rng(26).integers(0, 1 << 16, count - edges.size, dtype=np.uint16)
    return np.concatenate([edges, bits.view(dtype)])


def _same_or_both_nan(got: np.ndarray, expected: np.ndarray) -> bool:
    nan = np.isnan(got.astype(np.float32))
    return bool(np.array_equal(nan, np.isnan(expected.astype(np.float32)))
                and np.array_equal(got.view(np.uint16)[~nan], expected.view(np.uint16)[~nan]))


@pytest.mark.parametrize("dtype", [bf16, f16])
@pytest.mark.parametrize(("opcode", "exact"), [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
])
def test_narrow_arithmetic_is_correctly_rounded_on_every_pair_of_a_sample(
        opcode: str, exact: np.ufunc, dtype: type) -> None:
    # Computing in f32 and rounding once is correctly rounded (f32 has more than twice the
    # significand bits plus two): the same as the exact result (f64 holds it, or rounds it
    # innocuously) rounded to the narrow type once.
    sample = _narrow_sample(dtype, 400)
    lhs, rhs = (v.ravel() for v in np.meshgrid(sample, sample))
    with np.errstate(all="ignore"):
        expected = exact(lhs.astype(np.float64), rhs.astype(np.float64)).astype(dtype)
        got = run(opcode, _type(dtype), lhs, rhs)
    assert got.dtype == np.dtype(dtype)
    assert _same_or_both_nan(got, expected)


@pytest.mark.parametrize("dtype", [bf16, f16])
def test_narrow_sqrt_is_correctly_rounded_on_every_value(dtype: type) -> None:
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    with np.errstate(all="ignore"):
        expected = np.sqrt(every.astype(np.float64)).astype(dtype)
        got = run("sqrt", _type(dtype), every)
    assert _same_or_both_nan(got, expected)


@pytest.mark.parametrize(("direction", "comparison_type", "lhs", "rhs", "expected"), [
    ("LT", None, [-0.0, NAN, 1.0, 1.0], [0.0, 1.0, NAN, 2.0], [False, False, False, True]),
    ("EQ", None, [-0.0, NAN], [0.0, NAN], [True, False]),
    ("NE", "FLOAT", [NAN, 1.0], [NAN, 1.0], [True, False]),
    ("LT", "TOTALORDER", [-0.0, NAN, -NAN, 1.0, NAN], [0.0, INF, -INF, NAN, NAN],
     [True, False, True, True, False]),
    ("GE", "TOTALORDER", [NAN, -0.0], [NAN, 0.0], [True, False]),
])
def test_compare_float(direction: str, comparison_type: str | None, lhs: list, rhs: list,
                       expected: list) -> None:
    result = run("compare", "pred", a(lhs, f32), a(rhs, f32), comparison_direction=direction,
                 comparison_type=comparison_type)
    assert_same(result, a(expected, bool))


def test_compare_integer_types() -> None:
    lhs, rhs = a([-1, 1], s32), a([1, -1], s32)
    assert_same(run("compare", "pred", lhs, rhs, comparison_direction="LT"), a([True, False], bool))
    assert_same(run("compare", "pred", lhs, rhs, comparison_direction="LT",
                    comparison_type="UNSIGNED"), a([False, True], bool))
    assert_same(run("compare", "pred", a([True], bool), a([False], bool),
                    comparison_direction="GT"), a([True], bool))


def test_select_and_clamp() -> None:
    assert_same(run("select", "f32", a([True, False], bool), a([1, 2], f32), a([3, 4], f32)),
                a([1, 4], f32))
    low, x, high = a([0, NAN, 0, 2, -0.0], f32), a([NAN, 1, 5, 1, 0.0], f32), a(
        [1, 2, NAN, 0, 0.0], f32)
    assert_same(run("clamp", "f32", low, x, high), a([NAN, NAN, NAN, 0, 0.0], f32))
    assert_same(run("clamp", "s32", a([0, 0], s32), a([-5, 9], s32), a([3, 3], s32)),
                a([0, 3], s32))


def test_reduce_precision_rounds_like_bf16_and_flushes() -> None:
    x = a([1.0 + 2**-8, 1.0 + 3 * 2**-8, 1e-39, 3e38, NAN], f32)
    result = run("reduce-precision", "f32", x, exponent_bits=8, mantissa_bits=7)
    # Same exponent width as f32: only the mantissa is rounded (denormals too), like bf16.
    assert_same(result, x.astype(bf16).astype(f32))
    small = run("reduce-precision", "f32", a([70000.0, -1e-6], f32), exponent_bits=5,
                mantissa_bits=10)
    assert_same(small, a([INF, -0.0], f32))


@pytest.mark.parametrize(("opcode", "dtype"), [
    ("and", f32), ("shift-left", f32), ("popcnt", f32), ("floor", s32), ("maximum", np.complex64),
])
def test_unsupported_type_is_reported(opcode: str, dtype: type) -> None:
    operands = [a([1], dtype)] * (1 if opcode in ("popcnt", "floor") else 2)
    with pytest.raises(Unsupported, match=f"unsupported: {opcode} on"):
        run(opcode, _type(dtype), *operands)

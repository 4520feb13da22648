"""arith: float rounding in the element type, NaN and signed zeros, integer wraparound,
signed/unsigned readings, undefined behaviour refused, poison given a fixed value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.mlir_snippets import binary, run, unary
from workbench.replay.errors import EvaluationError

NAN = float("nan")


def bits(value: object) -> int:
    return int(np.asarray(value).view(np.uint32))


@pytest.mark.parametrize(
    ("op", "lhs", "rhs", "expected"),
    [
        ("arith.addf", 16777216.0, 1.0, 16777216.0),  # f32 rounding, not f64
        ("arith.addf", -0.0, -0.0, -0.0),
        ("arith.addf", math.inf, -math.inf, NAN),
        ("arith.subf", 0.0, 0.0, 0.0),
        ("arith.mulf", 3.4e38, 10.0, math.inf),
        ("arith.mulf", -0.0, 5.0, -0.0),
        ("arith.divf", 1.0, -0.0, -math.inf),
        ("arith.divf", 0.0, 0.0, NAN),
        ("arith.maximumf", -0.0, 0.0, 0.0),
        ("arith.maximumf", 0.0, -0.0, 0.0),
        ("arith.minimumf", 0.0, -0.0, -0.0),
        ("arith.maximumf", NAN, 1.0, NAN),
        ("arith.minimumf", 1.0, NAN, NAN),
        ("arith.maxnumf", NAN, 1.0, 1.0),
        ("arith.minnumf", 2.0, NAN, 2.0),
    ],
)
def test_float_binary(op: str, lhs: float, rhs: float, expected: float) -> None:
    result = binary(op, "f32", np.float32(lhs), np.float32(rhs))
    assert result.dtype == np.float32
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)
        assert bool(np.signbit(result)) == (math.copysign(1.0, expected) < 0)


@pytest.mark.parametrize(
    ("op", "type_", "lhs", "rhs", "expected"),
    [
        ("arith.addi", "i32", 2147483647, 1, -2147483648),
        ("arith.subi", "i32", -2147483648, 1, 2147483647),
        ("arith.muli", "i8", 16, 16, 0),
        ("arith.muli", "i64", 2**62, 4, 0),
        ("arith.divsi", "i32", -7, 2, -3),
        ("arith.remsi", "i32", -7, 2, -1),
        ("arith.floordivsi", "i32", -7, 2, -4),
        ("arith.ceildivsi", "i32", -7, 2, -3),
        ("arith.ceildivsi", "i32", 7, 2, 4),
        ("arith.divui", "i32", -1, 2, 2147483647),  # 0xFFFFFFFF / 2
        ("arith.remui", "i8", -1, 10, 5),  # 255 % 10
        ("arith.maxsi", "i32", -1, 1, 1),
        ("arith.maxui", "i32", -1, 1, -1),
        ("arith.minui", "i16", -1, 7, 7),
        ("arith.andi", "i32", 12, 10, 8),
        ("arith.xori", "i32", -1, 5, -6),
        ("arith.shli", "i32", 1, 31, -2147483648),
        ("arith.shli", "i32", 1, 32, 0),  # poison: shift by the bit width
        ("arith.shrsi", "i32", -8, 1, -4),
        ("arith.shrui", "i32", -8, 1, 2147483644),
        ("arith.shrsi", "i32", -8, 40, 0),  # poison
        ("arith.addi", "index", 5, 7, 12),
    ],
)
def test_integer_binary(op: str, type_: str, lhs: int, rhs: int, expected: int) -> None:
    dtype = np.int64 if type_ == "index" else np.dtype(f"int{type_[1:]}")
    result = binary(op, type_, np.array(lhs).astype(dtype), np.array(rhs).astype(dtype))
    assert result.dtype == dtype
    assert int(result) == expected


@pytest.mark.parametrize(
    ("op", "lhs", "rhs"),
    [("arith.divsi", 1, 0), ("arith.remui", 1, 0), ("arith.divsi", -2147483648, -1)],
)
def test_undefined_behaviour_is_refused(op: str, lhs: int, rhs: int) -> None:
    with pytest.raises(EvaluationError, match="undefined behaviour"):
        binary(op, "i32", np.int32(lhs), np.int32(rhs))


@pytest.mark.parametrize(
    ("predicate", "lhs", "rhs", "expected"),
    [
        ("oeq", -0.0, 0.0, True),
        ("olt", NAN, 1.0, False),
        ("ult", NAN, 1.0, True),
        ("one", NAN, 1.0, False),
        ("une", NAN, NAN, True),
        ("ord", 1.0, NAN, False),
        ("uno", 1.0, NAN, True),
        ("oge", math.inf, math.inf, True),
        ("ugt", 1.0, 2.0, False),
        ("true", NAN, NAN, True),
        ("false", 1.0, 1.0, False),
    ],
)
def test_cmpf(predicate: str, lhs: float, rhs: float, expected: bool) -> None:
    result = binary(f"arith.cmpf {predicate},", "f32", np.float32(lhs), np.float32(rhs), "i1")
    assert result.dtype == np.bool_
    assert bool(result) is expected


@pytest.mark.parametrize(
    ("predicate", "lhs", "rhs", "expected"),
    [
        ("slt", -1, 1, True),
        ("ult", -1, 1, False),  # -1 is 0xFFFFFFFF unsigned
        ("sge", -2147483648, 2147483647, False),
        ("uge", -2147483648, 2147483647, True),
        ("eq", 5, 5, True),
        ("ne", 5, 5, False),
    ],
)
def test_cmpi(predicate: str, lhs: int, rhs: int, expected: bool) -> None:
    result = binary(f"arith.cmpi {predicate},", "i32", np.int32(lhs), np.int32(rhs), "i1")
    assert bool(result) is expected


def test_i1_reads_as_minus_one_when_signed() -> None:
    assert int(unary("arith.extsi", "i1", True, "i32")) == -1
    assert int(unary("arith.extui", "i1", True, "i32")) == 1
    assert float(unary("arith.sitofp", "i1", True, "f32")) == -1.0
    assert bool(binary("arith.cmpi slt,", "i1", True, False, "i1")) is True


@pytest.mark.parametrize(
    ("op", "source", "value", "result", "expected"),
    [
        ("arith.trunci", "i32", 257, "i8", 1),
        ("arith.trunci", "i32", 2, "i1", False),
        ("arith.trunci", "i32", 3, "i1", True),
        ("arith.extsi", "i8", -5, "i32", -5),
        ("arith.extui", "i8", -5, "i32", 251),
        ("arith.sitofp", "i32", -1, "f32", -1.0),
        ("arith.uitofp", "i32", -1, "f32", 4294967296.0),  # 4294967295 rounds up in f32
        ("arith.fptosi", "f32", -2.7, "i32", -2),
        ("arith.fptosi", "f32", 1e10, "i32", 2147483647),  # poison: saturated
        ("arith.fptosi", "f32", NAN, "i32", 0),  # poison: 0
        ("arith.fptoui", "f32", 300.5, "i8", -1),  # poison: saturated to 255, bits of -1
    ],
)
def test_casts(op: str, source: str, value: object, result: str, expected: object) -> None:
    dtypes = {"i1": np.bool_, "i8": np.int8, "i32": np.int32, "f32": np.float32}
    out = unary(op, source, np.array(value).astype(dtypes[source]), result)
    assert out.dtype == np.dtype(dtypes[result])
    assert out == expected


def test_float_truncation_rounds_to_nearest_even() -> None:
    halfway = np.float32(1.0 + 2.0**-11)  # exactly between two f16 values
    assert unary("arith.truncf", "f32", halfway, "f16") == np.float16(1.0)
    above = np.float32(1.0 + 2.0**-11 + 2.0**-20)
    assert unary("arith.truncf", "f32", above, "f16") == np.float16(1.0 + 2.0**-10)
    bf16 = unary("arith.truncf", "f32", np.float32(1.00390625), "bf16")
    assert float(bf16) == 1.0
    assert unary("arith.extf", "f16", np.float16(-0.0), "f32") == 0.0
    assert np.signbit(unary("arith.extf", "f16", np.float16(-0.0), "f32"))


def test_bitcast_keeps_bits() -> None:
    assert int(unary("arith.bitcast", "f32", np.float32(1.0), "i32")) == 0x3F800000
    nan = unary("arith.bitcast", "i32", np.int32(-4194304), "f32")  # 0xFFC00000
    assert np.isnan(nan) and bits(nan) == 0xFFC00000


def test_select_and_tensors() -> None:
    text = """
    func.func @main(%c: i1, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %0 = arith.select %c, %a, %b : tensor<3xf32>
      %1 = arith.addf %0, %0 : tensor<3xf32>
      return %1 : tensor<3xf32>
    }"""
    a = np.array([1, 2, 3], np.float32)
    b = np.array([-0.0, np.nan, 4], np.float32)
    np.testing.assert_array_equal(run(text, True, a, b), a * 2)
    result = run(text, False, a, b)
    assert np.signbit(result[0]) and np.isnan(result[1]) and result[2] == 8


def test_constants_in_every_printed_form() -> None:
    text = """
    func.func @main() -> (f32, f32, tensor<2xf32>, i8, index) {
      %0 = arith.constant 0xFF800000 : f32
      %1 = arith.constant -0.000000e+00 : f32
      %2 = arith.constant dense<[0x7FC00000, 1.5]> : tensor<2xf32>
      %3 = arith.constant 255 : i8
      %4 = arith.constant -1 : index
      return %0, %1, %2, %3, %4 : f32, f32, tensor<2xf32>, i8, index
    }"""
    negative_infinity, negative_zero, dense, byte, index = run(text)
    assert negative_infinity == -np.inf
    assert negative_zero == 0 and np.signbit(negative_zero)
    assert np.isnan(dense[0]) and dense[1] == 1.5
    assert int(byte) == -1 and byte.dtype == np.int8
    assert int(index) == -1 and index.dtype == np.int64

"""convert and bitcast-convert as XLA does them (values checked on XLA's CPU backend)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.replay.hlo import dtypes, evaluate_module

NAN = np.nan
INF = np.inf
FLOATS = np.array([NAN, -1.5, -0.5, 4.3e9, 3e9, 255.7, 256.0, -INF, INF], np.float32)


@pytest.mark.parametrize(("target", "expected"), [
    ("u32", [0, 0, 0, 4294967295, 3000000000, 255, 256, 0, 4294967295]),
    ("u8", [0, 0, 0, 255, 255, 255, 255, 0, 255]),
    ("s8", [0, -1, 0, 127, 127, 127, 127, -128, 127]),
    ("s32", [0, -1, 0, 2147483647, 2147483647, 255, 256, -2147483648, 2147483647]),
    ("s64", [0, -1, 0, 4300000256, 3000000000, 255, 256, -(2**63), 2**63 - 1]),
    ("u64", [0, 0, 0, 4300000256, 3000000000, 255, 256, 0, 2**64 - 1]),
    ("pred", [True, True, True, True, True, True, True, True, True]),
])
def test_float_to_integer_truncates_and_saturates(target: str, expected: list) -> None:
    result = run("convert", target, FLOATS)
    assert_same(result, np.array(expected, dtype=result.dtype))


def test_other_conversions() -> None:
    assert_same(run("convert", "pred", np.array([-0.0, 0.0], np.float32)),
                np.array([False, False]))
    assert_same(run("convert", "s32", np.array([NAN, 65504, -INF, 2.5], np.float16)),
                np.array([0, 65504, -(2**31), 2], np.int32))
    assert_same(run("convert", "u8", np.array([-1, 256, 255], np.int32)),
                np.array([255, 0, 255], np.uint8))
    assert_same(run("convert", "f32", np.array([2**62 + 1, -(2**53 + 1)], np.int64)),
                np.array([2**62, -(2**53)], np.float32))
    assert_same(run("convert", "bf16", np.array([1.00390625, 1.01171875], np.float32)),
                np.array([1.0, 1.015625], ml_dtypes.bfloat16))


def test_bitcast_convert_changes_width_through_a_minor_dimension() -> None:
    x = np.array([1.0, -0.0], np.float32)
    assert_same(run("bitcast-convert", "s32", x), x.view(np.int32))
    as_bytes = run("bitcast-convert", Shape("u8", (2, 4)), x)
    assert_same(as_bytes, x.view(np.uint8).reshape(2, 4))
    assert_same(run("bitcast-convert", Shape("f32", (2,)), as_bytes), x)


def test_cast_of_a_broadcast_converts_its_distinct_elements_once() -> None:
    row = np.array([NAN, -0.0, 1.5, 3.0e38, -INF], ml_dtypes.bfloat16)
    spread = np.broadcast_to(row, (64, 32, 5))
    widened = dtypes.cast(spread, np.dtype(np.float32))
    assert widened.strides[:2] == (0, 0)  # still a broadcast, not 10,240 conversions
    assert_same(widened, spread.astype(np.float32))
    assert_same(dtypes.cast(widened, np.dtype(ml_dtypes.bfloat16)), spread)


def test_narrow_op_on_a_broadcast_operand_rounds_as_on_the_full_array() -> None:
    bf16 = ml_dtypes.bfloat16
    rows = np.array([[1.0, -0.0, 3.0, NAN], [2.5e38, -1.0, 0.1, 7.0]], bf16)
    bias = np.array([1e-3, -0.0, 2.5e38, 1.0], bf16)
    shape = Shape("bf16", (2, 4))
    parameters = [Instruction("x", "parameter", shape, parameter_number=0),
                  Instruction("b", "parameter", Shape("bf16", (4,)), parameter_number=1)]
    body = [Instruction("spread", "broadcast", shape, ["b"], dimensions=(1,)),
            Instruction("sum", "add", shape, ["x", "spread"])]
    entry = Computation("entry", [*parameters, *body], "sum", is_entry=True)
    result = evaluate_module(HloModule("m", [entry], "entry"), [rows, bias])
    expected = (rows.astype(np.float32) + bias.astype(np.float32)).astype(bf16)
    assert_same(result, expected)

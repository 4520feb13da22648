"""convert and bitcast-convert as XLA does them (values checked on XLA's CPU backend)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Shape

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

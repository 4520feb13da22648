"""stochastic-convert: the fraction decides against the random bits (hand-computed; the same
cases give the same results on XLA's CPU backend)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Shape
from workbench.replay.errors import Unsupported

QUARTER = 1 << 30  # 0.25 scaled to u32


def convert(x: np.ndarray, random: np.ndarray, target: str) -> np.ndarray:
    return run("stochastic-convert", Shape(target, x.shape), x, random)


def test_the_fraction_is_the_probability_of_rounding_up() -> None:
    x = np.array([2.25, 2.25, -2.25, -2.25, 0.0, 5.0], np.float32)
    random = np.array([QUARTER - 1, QUARTER, QUARTER - 1, QUARTER, 0, 0], np.uint32)
    # up below the threshold (magnitude: -2.25 goes to -3), down from it; exact values stay
    assert_same(convert(x, random, "s32"), np.array([3, 2, -3, -2, 0, 5], np.int32))


def test_saturation_and_nan() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 300, -300, -128.5, 126.7, 127.5, -0.0], np.float32)
    random = np.zeros(9, np.uint32)
    assert_same(convert(x, random, "s8"),
                np.array([0, 127, -128, 127, -128, -128, 127, 127, 0], np.int8))


def test_narrow_floats_use_bits_of_their_own_width() -> None:
    x = np.array([1.5, 1.5, -1.5], np.float16)
    random = np.array([32767, 32768, 0], np.uint16)  # 0.5 scaled to u16 is 32768
    assert_same(convert(x, random, "s16"), np.array([2, 1, -2], np.int16))
    brain = np.array([2.75, 2.75], ml_dtypes.bfloat16)
    assert_same(convert(brain, np.array([49151, 49152], np.uint16), "s32"),
                np.array([3, 2], np.int32))


@pytest.mark.parametrize(("x", "random", "target"), [
    (np.ones(2, np.float32), np.zeros(2, np.uint32), "f16"),
    (np.ones(2, np.float32), np.zeros(2, np.uint32), "u32"),
    (np.ones(2, np.int32), np.zeros(2, np.uint32), "s8"),
])
def test_only_float_to_signed_integer(x: np.ndarray, random: np.ndarray, target: str) -> None:
    with pytest.raises(Unsupported, match="^unsupported: stochastic-convert from"):
        convert(x, random, target)

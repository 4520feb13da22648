"""reduce-window and select-and-scatter: strides, padding skipped, dilation, generic bodies."""

from __future__ import annotations

import numpy as np

from tests.helpers.hlo_builders import (
    array_shape,
    assert_same,
    computation,
    run,
    scalar_computation,
)
from workbench.hlo_ir import Instruction, Shape, WindowDimension


def window(*dims: WindowDimension) -> tuple[WindowDimension, ...]:
    return dims


def test_cumulative_sum_as_jax_writes_it() -> None:
    x = np.array([1, 2, 3, 4], np.int32)
    result = run("reduce-window", "s32", x, np.int32(0),
                 window=window(WindowDimension(4, padding_low=3)),
                 called_computations=["add"],
                 computations=(scalar_computation("add", "add", "s32"),))
    assert_same(result, np.array([1, 3, 6, 10], np.int32))


def test_max_pool_with_stride_and_padding_skips_padding() -> None:
    x = np.array([[1, -5, 3, 0], [4, 2, -1, 8]], np.float32)
    dims = window(WindowDimension(2, stride=2, padding_low=0, padding_high=0),
                  WindowDimension(3, stride=2, padding_low=1, padding_high=1))
    result = run("reduce-window", array_shape("f32", 1, 2), x, np.float32(-np.inf), window=dims,
                 called_computations=["max"],
                 computations=(scalar_computation("max", "maximum", "f32"),))
    assert_same(result, np.array([[4, 8]], np.float32))


def test_init_counted_once_and_dilations() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    # Base dilation 2: [1,_,2,_,3]; window 2 with window dilation 2 reads positions p, p+2.
    dims = window(WindowDimension(2, base_dilation=2, window_dilation=2))
    result = run("reduce-window", array_shape("f32", 3), x, np.float32(10), window=dims,
                 called_computations=["add"],
                 computations=(scalar_computation("add", "add", "f32"),))
    assert_same(result, np.array([13, 10, 15], np.float32))


def test_generic_body_runs_batched() -> None:
    f32 = Shape("f32")
    body = computation("sum_of_squares", [
        Instruction("acc", "parameter", f32, parameter_number=0),
        Instruction("x", "parameter", f32, parameter_number=1),
        Instruction("sq", "multiply", f32, ["x", "x"]),
        Instruction("r", "add", f32, ["acc", "sq"]),
    ])
    x = np.array([1, 2, 3], np.float32)
    result = run("reduce-window", "f32", x, np.float32(0),
                 window=window(WindowDimension(2, padding_high=1)),
                 called_computations=["sum_of_squares"], computations=(body,))
    assert_same(result, np.array([5, 13, 9], np.float32))


def test_select_and_scatter_is_max_pool_gradient() -> None:
    operand = np.array([1, 5, 5, 2, 7, 3], np.float32)
    source = np.array([10, 20, 30], np.float32)
    result = run("select-and-scatter", "f32", operand, source, np.float32(0),
                 window=window(WindowDimension(2, stride=2)),
                 called_computations=["ge", "add"],
                 computations=(scalar_computation("ge", "compare", "f32",
                                                  comparison_direction="GE"),
                               scalar_computation("add", "add", "f32")))
    assert_same(result, np.array([0, 10, 20, 0, 30, 0], np.float32))
    # Overlapping windows (stride 1): the first maximum of each window collects its source.
    result = run("select-and-scatter", "f32", operand[:4], np.array([1, 2, 4], np.float32),
                 np.float32(0), window=window(WindowDimension(2)),
                 called_computations=["ge", "add"],
                 computations=(scalar_computation("ge", "compare", "f32",
                                                  comparison_direction="GE"),
                               scalar_computation("add", "add", "f32")))
    assert_same(result, np.array([0, 3, 4, 0], np.float32))

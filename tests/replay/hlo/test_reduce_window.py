"""reduce-window and select-and-scatter: strides, padding skipped, dilation, generic bodies."""

from __future__ import annotations

import numpy as np
import pytest

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


ROUNDED_SUM = """HloModule rounded_sum

add_rounded {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  sum = f32[] add(a, b)
  narrow = bf16[] convert(sum)
  ROOT back = f32[] convert(narrow)
}

ENTRY main {
  x = f32[4,64] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,2] reduce-window(x, zero), window={size=1x32 stride=1x32}, to_apply=add_rounded
}
"""


def test_a_sum_rounded_to_bf16_at_each_step_runs_as_numpy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XLA's float normalization makes a bf16 reduction's adder `add` in f32 then a round
    trip through bf16: recognized, it runs as numpy calls, in XLA's order, bit for bit as
    the computation run step by step does."""
    import ml_dtypes

    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.hlo import combiners, evaluate_module

    module = parse_hlo_text(ROUNDED_SUM)
    x = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float32) * 100
    fast = evaluate_module(module, [x])
    expected = np.zeros((4, 2), np.float32)
    for k in range(32):
        total = expected + x.reshape(4, 2, 32)[:, :, k]
        expected = total.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert_same(fast, expected)
    calls = []
    original = combiners.recognize_rounded
    monkeypatch.setattr(combiners, "recognize_rounded",
                        lambda *args: calls.append(original(*args)))
    assert_same(evaluate_module(module, [x]), fast)  # the computation, run step by step
    assert calls == [("add", "bf16")]

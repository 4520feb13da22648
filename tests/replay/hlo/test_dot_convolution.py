"""dot and convolution against independent reference loops (one file: same type rules)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.helpers.hlo_builders import array_shape, assert_same, run
from workbench.hlo_ir import ConvolutionDimensionNumbers, DotDimensionNumbers, WindowDimension
from workbench.replay.errors import Unsupported


def test_dot_with_batch_and_contracting_dims() -> None:
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((2, 3, 4)).astype(np.float64)  # batch, m, k
    rhs = rng.standard_normal((4, 2, 5)).astype(np.float64)  # k, batch, n
    numbers = DotDimensionNumbers(lhs_contracting_dims=(2,), rhs_contracting_dims=(0,),
                                  lhs_batch_dims=(0,), rhs_batch_dims=(1,))
    result = run("dot", array_shape("f64", 2, 3, 5), lhs, rhs, dot_dimension_numbers=numbers)
    np.testing.assert_allclose(result, np.einsum("bmk,kbn->bmn", lhs, rhs), rtol=1e-12)


def test_dot_types_follow_the_result() -> None:
    numbers = DotDimensionNumbers(lhs_contracting_dims=(1,), rhs_contracting_dims=(0,))
    lhs = np.array([[100, 100]], np.int8)
    rhs = np.array([[100], [100]], np.int8)
    assert_same(run("dot", array_shape("s32", 1, 1), lhs, rhs, dot_dimension_numbers=numbers),
                np.array([[20000]], np.int32))
    assert_same(run("dot", array_shape("s8", 1, 1), lhs, rhs, dot_dimension_numbers=numbers),
                np.array([[32]], np.int8))  # 20000 mod 256, wrapped
    # f16 accumulates in f32 and rounds once: 2048 + 1 + 1 = 2050, not 2048.
    halves = np.array([[2048, 1, 1]], np.float16)
    ones = np.ones((3, 1), np.float16)
    assert_same(run("dot", array_shape("f16", 1, 1), halves, ones,
                    dot_dimension_numbers=numbers), np.array([[2050]], np.float16))


def test_dot_packed_nibble_is_unsupported() -> None:
    numbers = DotDimensionNumbers(lhs_contracting_dims=(1,), rhs_contracting_dims=(0,))
    x = np.ones((1, 1), np.int8)
    with pytest.raises(Unsupported, match="packed nibble"):
        run("dot", array_shape("s8", 1, 1), x, x, dot_dimension_numbers=numbers,
            attrs={"operand_precision": "{packed_nibble,packed_nibble}"})


def reference_convolution(x: np.ndarray, k: np.ndarray, stride: int, low: int, high: int,
                          base: int, dilation: int, groups: int) -> np.ndarray:
    """NCW input, OIW kernel, 1 spatial dim, straight from Operation Semantics."""
    n, _, w = x.shape
    o, i, kw = k.shape
    dilated = (w - 1) * base + 1
    padded = low + dilated + high
    extent = (kw - 1) * dilation + 1
    out_w = max((padded - extent) // stride + 1, 0)
    out = np.zeros((n, o, out_w), np.float64)
    per_group = o // groups
    for b, f, p in itertools.product(range(n), range(o), range(out_w)):
        g = f // per_group
        total = 0.0
        for ch, t in itertools.product(range(i), range(kw)):
            position = p * stride + t * dilation - low
            if position < 0 or position % base or position // base >= w:
                continue
            total += x[b, g * i + ch, position // base] * k[f, ch, t]
        out[b, f, p] = total
    return out


@pytest.mark.parametrize(("stride", "low", "high", "base", "dilation", "groups"), [
    (1, 0, 0, 1, 1, 1), (2, 1, 2, 1, 1, 1), (1, 2, 0, 2, 1, 1), (1, 1, 1, 1, 2, 2),
    (3, -1, 2, 1, 1, 2),
])
def test_convolution_matches_reference(stride: int, low: int, high: int, base: int,
                                       dilation: int, groups: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 7))
    k = rng.standard_normal((4, 4 // groups, 3))
    expected = reference_convolution(x, k, stride, low, high, base, dilation, groups)
    # Input and output as b0f (dim_labels=b0f_oi0->b0f) to exercise the dimension numbers.
    numbers = ConvolutionDimensionNumbers(0, 2, (1,), 1, 0, (2,), 0, 2, (1,))
    window = (WindowDimension(3, stride, low, high, dilation, base),)
    result = run("convolution", array_shape("f64", 2, expected.shape[2], 4),
                 x.transpose(0, 2, 1), k,
                 convolution_dimension_numbers=numbers, window=window,
                 feature_group_count=groups)
    np.testing.assert_allclose(result, expected.transpose(0, 2, 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("stride", "low", "high", "base", "special_input"), [
    (1, 1, 1, 1, False), (2, 2, 1, 1, False), (1, 1, 2, 2, False), (1, 1, 1, 1, True),
    (1, 2, 2, 2, True),
])
def test_non_finite_kernel_skips_padding_as_xla_does(stride: int, low: int, high: int,
                                                     base: int, special_input: bool) -> None:
    """A kernel holding inf and NaN over padding and base-dilation holes: XLA skips the holes,
    so they add no NaN (multiplying zeros in would, 0 * inf); zeros of the input itself do,
    and so do an input's own inf and NaN."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 7))
    x[0, 1, 3] = 0.0
    if special_input:
        x[1, 0, 2], x[1, 2, 5], x[0, 3, 0] = np.inf, -np.inf, np.nan
    k = rng.standard_normal((4, 4, 3))
    k[0, 1, 0], k[2, 3, 2], k[3, 0, 1] = np.inf, -np.inf, np.nan
    with np.errstate(invalid="ignore"):  # 0 * inf, inf - inf: NaN, as XLA computes them
        expected = reference_convolution(x, k, stride, low, high, base, 1, 1)
    numbers = ConvolutionDimensionNumbers(0, 1, (2,), 1, 0, (2,), 0, 1, (2,))
    window = (WindowDimension(3, stride, low, high, 1, base),)
    result = run("convolution", array_shape("f64", *expected.shape), x, k,
                 convolution_dimension_numbers=numbers, window=window)
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    assert np.isfinite(expected).any() and np.isinf(expected).any() and np.isnan(expected).any()
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


def test_batch_group_convolution() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 1, 5))  # NCW, 2 batch groups of 2
    k = rng.standard_normal((2, 1, 2))  # OIW, one output feature per batch group
    numbers = ConvolutionDimensionNumbers(0, 1, (2,), 1, 0, (2,), 0, 1, (2,))
    result = run("convolution", array_shape("f64", 2, 2, 4), x, k,
                 convolution_dimension_numbers=numbers, window=(WindowDimension(2),),
                 batch_group_count=2)
    for group in range(2):
        expected = reference_convolution(x[2 * group:2 * group + 2], k[group:group + 1],
                                         1, 0, 0, 1, 1, 1)
        np.testing.assert_allclose(result[:, group:group + 1], expected, rtol=1e-12)

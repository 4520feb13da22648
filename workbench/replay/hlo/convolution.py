"""`convolution` with any dimension numbers, strides, padding (negative too), base and window
dilation, window reversal, feature groups and batch groups, as one einsum over a strided
view of the padded input.

Padding and base-dilation holes are zeros multiplied into the sum; that equals XLA's skipping
them unless the kernel holds inf or NaN (0 * inf is NaN): then the kernel's non-finite
elements are counted apart (`_skipping_holes`), as skipping gives. Types follow `dot`:
operands in the result type, narrow floats accumulated in f32.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction, WindowDimension
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.dot import accumulation, check_precision
from workbench.replay.hlo.registry import Value, handles
from workbench.replay.hlo.shape_ops import pad_array

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


@handles("convolution")
def convolution(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    check_precision(instruction)
    numbers = instruction.convolution_dimension_numbers
    if numbers is None:
        raise EvaluationError(f"{instruction.name}: convolution without dim_labels")
    result_dtype = dtypes.dtype_of(instruction.shape.element_type)
    work = accumulation(result_dtype)
    lhs = dtypes.convert(np.asarray(operands[0]), result_dtype).astype(work, copy=False)
    rhs = dtypes.convert(np.asarray(operands[1]), result_dtype).astype(work, copy=False)
    spatial = len(numbers.input_spatial_dimensions)
    window = instruction.window or tuple(WindowDimension(size=rhs.shape[d])
                                         for d in numbers.kernel_spatial_dimensions)
    if len(window) != spatial:
        raise EvaluationError(f"{instruction.name}: window rank {len(window)} != {spatial}")
    # Input as (N, C, spatial...), kernel as (O, I, spatial...).
    x = np.transpose(lhs, [numbers.input_batch_dimension, numbers.input_feature_dimension,
                           *numbers.input_spatial_dimensions])
    k = np.transpose(rhs, [numbers.kernel_output_feature_dimension,
                           numbers.kernel_input_feature_dimension,
                           *numbers.kernel_spatial_dimensions])
    reversed_axes = tuple(2 + i for i, w in enumerate(window) if w.window_reversal)
    if reversed_axes:
        k = np.flip(k, reversed_axes)
    groups = (instruction.feature_group_count, instruction.batch_group_count)
    padded = any(w.padding_low > 0 or w.padding_high > 0 or w.base_dilation > 1 for w in window)
    if padded and not np.isfinite(k).all():
        out = _skipping_holes(x, k, window, groups, instruction.name)
    else:
        out = _convolve(x, k, window, groups, instruction.name)
    order = [numbers.output_batch_dimension, numbers.output_feature_dimension,
             *numbers.output_spatial_dimensions]
    return np.transpose(out, np.argsort(order)).astype(result_dtype, copy=False)


def _convolve(x: np.ndarray, k: np.ndarray, window: tuple[WindowDimension, ...],
              group_counts: tuple[int, int], name: str) -> np.ndarray:
    """The convolution of x (N, C, spatial...) by k (O, I, spatial...) as (N, O, spatial...),
    padding and base-dilation holes zeros multiplied into the sum; `group_counts` (feature
    groups, batch groups)."""
    spatial = len(window)
    low = [0, 0] + [w.padding_low for w in window]
    high = [0, 0] + [w.padding_high for w in window]
    interior = [0, 0] + [w.base_dilation - 1 for w in window]
    if any(low) or any(high) or any(interior):
        x = pad_array(x, np.zeros((), x.dtype), low, high, interior, name)
    batch, channels = x.shape[:2]
    out_features, kernel_channels = k.shape[:2]
    sizes = k.shape[2:]
    extents = [(s - 1) * w.window_dilation + 1 for s, w in zip(sizes, window, strict=True)]
    out_spatial = [max((n - e) // w.stride + 1, 0)
                   for n, e, w in zip(x.shape[2:], extents, window, strict=True)]
    view = np.lib.stride_tricks.as_strided(
        x,
        shape=(batch, channels, *out_spatial, *sizes),
        strides=(*x.strides[:2],
                 *(x.strides[2 + i] * w.stride for i, w in enumerate(window)),
                 *(x.strides[2 + i] * w.window_dilation for i, w in enumerate(window))),
        writeable=False,
    )
    groups, batch_groups = group_counts
    if channels != kernel_channels * groups or out_features % (groups * batch_groups):
        raise EvaluationError(f"{name}: feature groups do not divide the shapes")
    if batch % batch_groups:
        raise EvaluationError(f"{name}: batch groups do not divide the batch")
    letters = iter(string.ascii_uppercase)
    out_axes = "".join(next(letters) for _ in range(spatial))
    window_axes = "".join(next(letters) for _ in range(spatial))
    # view: (B*, N, G, I, out..., win...) with N split into batch groups B*.
    v = view.reshape(batch_groups, batch // batch_groups, groups, kernel_channels,
                     *out_spatial, *sizes)
    # kernel: O = (B*, G, Og) outputs; batch group b uses outputs [b*O/B*, (b+1)*O/B*).
    per_group = out_features // (groups * batch_groups)
    kk = k.reshape(batch_groups, groups, per_group, kernel_channels, *sizes)
    out = np.einsum(f"bngi{out_axes}{window_axes},bgoi{window_axes}->nbgo{out_axes}",
                    v, kk, optimize=True)
    out = out.reshape(batch // batch_groups, out_features, *out_spatial)
    return out


def _skipping_holes(x: np.ndarray, k: np.ndarray, window: tuple[WindowDimension, ...],
                    groups: tuple[int, int], name: str) -> np.ndarray:
    """The convolution as XLA defines it where the kernel holds inf or NaN: padding and
    base-dilation holes are skipped, not multiplied (0 * inf would be NaN). The finite parts
    of input and kernel are convolved as usual; each window's products with a non-finite
    factor are counted by kind (NaN, +inf, -inf; holes count none, being zeros in the
    indicator arrays) and added as IEEE adds them."""
    if np.iscomplexobj(k):
        raise Unsupported("convolution of a complex kernel holding inf or NaN over padding")

    def count(where_x: np.ndarray, where_k: np.ndarray) -> np.ndarray:
        return _convolve(where_x.astype(np.float64), where_k.astype(np.float64), window,
                         groups, name)

    base = _convolve(np.where(np.isfinite(x), x, 0), np.where(np.isfinite(k), k, 0), window,
                     groups, name)
    every = np.ones(x.shape, bool)
    nan = (count(np.isnan(x), np.ones(k.shape, bool)) + count(every, np.isnan(k))
           + count(x == 0, np.isinf(k)) + count(np.isinf(x), k == 0))
    pos = (count(x == np.inf, k > 0) + count(x == -np.inf, k < 0)
           + count(x > 0, k == np.inf) + count(x < 0, k == -np.inf))
    neg = (count(x == np.inf, k < 0) + count(x == -np.inf, k > 0)
           + count(x > 0, k == -np.inf) + count(x < 0, k == np.inf))
    special = np.where((nan > 0) | ((pos > 0) & (neg > 0)), np.nan,
                       np.where(pos > 0, np.inf, np.where(neg > 0, -np.inf, 0.0)))
    return (base + special).astype(base.dtype, copy=False)

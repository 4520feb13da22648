"""`convolution` with any dimension numbers, strides, padding (negative too), base and window
dilation, window reversal, feature groups and batch groups, as one einsum over a strided
view of the padded input.

Padding and base-dilation holes are zeros multiplied into the sum; that equals XLA's skipping
them unless the kernel holds inf or NaN (0 * inf is NaN), a case reported as unsupported
rather than guessed. Types follow `dot`: operands in the result type, narrow floats
accumulated in f32.
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
    low = [0, 0] + [w.padding_low for w in window]
    high = [0, 0] + [w.padding_high for w in window]
    interior = [0, 0] + [w.base_dilation - 1 for w in window]
    if any(low) or any(high) or any(interior):
        if (any(v > 0 for v in low + high) or any(interior)) and not np.isfinite(k).all():
            raise Unsupported("convolution of a non-finite kernel over padding")
        x = pad_array(x, np.zeros((), x.dtype), low, high, interior, instruction.name)
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
    groups = instruction.feature_group_count
    batch_groups = instruction.batch_group_count
    if channels != kernel_channels * groups or out_features % (groups * batch_groups):
        raise EvaluationError(f"{instruction.name}: feature groups do not divide the shapes")
    if batch % batch_groups:
        raise EvaluationError(f"{instruction.name}: batch groups do not divide the batch")
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
    order = [numbers.output_batch_dimension, numbers.output_feature_dimension,
             *numbers.output_spatial_dimensions]
    return np.transpose(out, np.argsort(order)).astype(result_dtype, copy=False)

"""XLA GPU's library custom-calls (cuDNN, cuBLAS, cuSOLVER), evaluated as the math they stand for.

Semantics as XLA defines them, read from the instruction:

- `__cudnn$convForward`, `__cudnn$convBiasActivationForward`, `__cudnn$convBackwardInput`,
  `__cudnn$convBackwardFilter`: a tuple (result, u8[] workspace). `window`, `dim_labels` and
  `feature_group_count` are those of the *forward* convolution, so for backward-input the
  result has the input's labels and operand 0 the output's; for backward-filter the result has
  the kernel's labels and operand 1 the output's. `backend_config.cudnn_conv_backend_config`
  gives `conv_result_scale`, `side_input_scale` and `activation_mode`:
  `activation(conv * conv_result_scale + side_input * side_input_scale + bias)`.
- `__cudnn$fmhaSoftmax` (and its `...Bias`/`...Scale...` forms): softmax attention
  `softmax(fmha_scale * Q.K [+ bias] [masked]) . V` with both products' dot dimension numbers
  from `cudnn_fmha_backend_config`. Masks: `mask_type` CAUSAL, PADDING (the s32
  q_seqlen, kv_seqlen operands after the bias; a padded query's output is zero) and
  PADDING_CAUSAL, and `sliding_window_length` L (keys in (query - L, query]). Dropout (cuDNN's
  own random numbers), packed segments and paged attention are unsupported. The training
  form's f32 second result is each row's logsumexp (cuDNN's softmax `Stats`).
- `__cudnn$fmhaSoftmaxBackward` (and its Bias/Mask/Dropout forms): (dQ, dK, dV, workspace)
  from (Q, K, V, stats, dO, [bias], O, [q_seqlen, kv_seqlen]), the four backward products'
  dot dimension numbers from the backend_config, masked as the forward call; with a bias, also
  dbias (before the workspace): the scores' gradient summed where the bias is broadcast, as
  the kernel sums a batch-shared bias's. Dropout is unsupported.
- `__cublas$gemm`, `__cublas$lt$matmul`: `epilogue(alpha * dot(a, b) + beta * c + bias)` with
  `gemm_backend_config`'s dot dimension numbers; epilogues DEFAULT, BIAS, RELU, GELU (tanh
  form) and their BIAS forms; the AUX forms (a second output) are unsupported.
- `__cublas$lt$matmul$f8`: the same with per-tensor scales after a, b (and c): a_scale,
  b_scale, then c_scale and d_scale, d_scale alone, or none, as cuBLASLt applies them
  (`d_scale * epilogue(alpha * a_scale * b_scale * a.b + beta * c_scale * c + bias)`); an f8
  result saturates. Block or MX scaling (`scale_mode` other than 1) is unsupported.
- `__cublas$triangularSolve`: XLA's triangular-solve, options in JSON; a tuple with workspace.
- `cusolver_potrf_ffi`, `cusolver_getrf_ffi`, `cusolver_syevd_ffi` through SciPy's LAPACK
  (the same factorizations; pivots LAPACK's 1-based int32 as cuSOLVER's), and
  `cu_lu_pivots_to_permutation` (0-based pivots to a permutation), leading dimensions batch.
- `cusolver_geqrf_ffi` (a -> (Householder form, tau)) and `cusolver_orgqr_ffi` ((a, tau) -> Q,
  as many columns as the result has): LAPACK's geqrf / orgqr, the form JAX's `qr` chains.
- `cusolver_gesvd_ffi`, `cusolver_gesvdj_ffi`: (a) -> (a, s, u, vt, info) with
  `compute_uv` and `full_matrices` from the backend_config; singular values descending, u and
  vt zero when not computed; the `a` cuSOLVER leaves behind is unspecified and JAX drops it
  (the input is returned).
- `cu_threefry2x32_ffi` (and the older `cu_threefry2x32`): (k0, k1, x0, x1) -> (y0, y1),
  Threefry-2x32 with 20 rounds as `jax.random` defines it, elementwise on uint32.

- `__cub$DeviceRadixSort`: (keys, [values]) -> (sorted keys, [values alike], u8[] scratch), the
  stable radix sort XLA's sort rewriter gives a large sort along its last dimension, descending
  as `SortOptions` says; float keys in CUB's order (-0.0 and +0.0 equal, NaNs by sign bit).

Any other `__cudnn$`, `__cublas$`, `__cub$` or `cu*` target is `unsupported: custom-call
<target>`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.hlo_ir import DotDimensionNumbers, Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.convolution import convolution
from workbench.replay.hlo.dot import accumulation, dot
from workbench.replay.hlo.lapack import parse_backend_config
from workbench.replay.hlo.linalg import triangular_solve
from workbench.replay.hlo.registry import Value, handles_custom_call

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

def json_config(instruction: Instruction, key: str | None = None) -> dict[str, Any]:
    """The instruction's JSON `backend_config` (or its `key` member)."""
    try:
        config = json.loads(instruction.backend_config or "{}")
    except json.JSONDecodeError:
        raise EvaluationError(f"{instruction.name}: backend_config is not JSON") from None
    if key is not None:
        config = config.get(key)
        if not isinstance(config, dict):
            raise EvaluationError(f"{instruction.name}: backend_config has no {key}")
    return config


def _array_result(instruction: Instruction) -> Shape:
    """The result proper: element 0 of a (result, workspace) tuple."""
    shape = instruction.shape
    return shape.tuple_shapes[0] if shape.is_tuple else shape


def _with_workspace(instruction: Instruction, value: np.ndarray) -> Value:
    shape = instruction.shape
    if not shape.is_tuple:
        return value
    rest = tuple(np.zeros(s.dims, dtypes.dtype_of(s.element_type)) for s in shape.tuple_shapes[1:])
    return (value, *rest)


# --- cuDNN convolutions ----------------------------------------------------------------------

_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "kNone": lambda x: x,
    "kRelu": lambda x: np.maximum(x, 0),
    "kRelu6": lambda x: np.clip(x, 0, 6),
    "kTanh": np.tanh,
    "kSigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "kElu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
}


def _conv_config(instruction: Instruction) -> dict[str, Any]:
    return json_config(instruction, "cudnn_conv_backend_config")


def _canonical_conv(instruction: Instruction) -> tuple[list[int], list[int], list[int]]:
    """Axis orders bringing input, kernel and output to (N, C, S...), (O, I, K...), (N, O, Y...)."""
    n = instruction.convolution_dimension_numbers
    if n is None:
        raise EvaluationError(f"{instruction.name}: cuDNN convolution without dim_labels")
    return ([n.input_batch_dimension, n.input_feature_dimension, *n.input_spatial_dimensions],
            [n.kernel_output_feature_dimension, n.kernel_input_feature_dimension,
             *n.kernel_spatial_dimensions],
            [n.output_batch_dimension, n.output_feature_dimension, *n.output_spatial_dimensions])


def _window_slices(instruction: Instruction, out_sizes: tuple[int, ...]
                   ) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """Each kernel position w, with the slice of the padded input that meets output y at
    y * stride + w * dilation."""
    window = instruction.window or ()
    if len(window) != len(out_sizes):
        raise EvaluationError(f"{instruction.name}: window rank {len(window)}")
    if any(w.base_dilation != 1 or w.window_reversal or w.padding_low < 0 or w.padding_high < 0
           for w in window):
        raise Unsupported(f"custom-call {instruction.custom_call_target} with lhs dilation, "
                          "reversal or negative padding")
    positions = []
    for w in itertools.product(*(range(d.size) for d in window)):
        slices = tuple(slice(p * d.window_dilation,
                             p * d.window_dilation + (y - 1) * d.stride + 1, d.stride)
                       for p, d, y in zip(w, window, out_sizes, strict=True))
        positions.append((w, slices))
    return positions


def _grouped(instruction: Instruction) -> int:
    if instruction.batch_group_count != 1:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with batch groups")
    return instruction.feature_group_count


@handles_custom_call("__cudnn$convForward", "__cudnn$convBiasActivationForward")
def conv_forward(interpreter: Interpreter, instruction: Instruction,
                 operands: list[Value]) -> Value:
    config = _conv_config(instruction)
    result = _array_result(instruction)
    plain = replace(instruction, opcode="convolution", shape=result)
    conv = np.asarray(convolution(interpreter, plain, operands[:2]))
    work = accumulation(conv.dtype)
    total = conv.astype(work) * float(config.get("conv_result_scale", 1))
    if len(operands) > 3:
        side = float(config.get("side_input_scale", 0))
        if side:
            total = total + side * np.asarray(operands[3]).astype(work)
    if len(operands) > 2:
        bias = np.asarray(operands[2]).astype(work)
        numbers = instruction.convolution_dimension_numbers
        if numbers is None:
            raise EvaluationError(f"{instruction.name}: a convolution without dim_labels")
        feature = numbers.output_feature_dimension
        total = total + np.expand_dims(bias, [d for d in range(total.ndim) if d != feature])
    mode = config.get("activation_mode", "kNone")
    if mode not in _ACTIVATIONS:
        raise Unsupported(f"custom-call {instruction.custom_call_target} activation {mode}")
    value = _ACTIVATIONS[mode](total).astype(conv.dtype)
    return _with_workspace(instruction, value)


@handles_custom_call("__cudnn$convBackwardInput")
def conv_backward_input(interpreter: Interpreter, instruction: Instruction,
                        operands: list[Value]) -> Value:
    """The transpose of the forward convolution applied to the output gradient."""
    config = _conv_config(instruction)
    result = _array_result(instruction)
    dtype = dtypes.dtype_of(result.element_type)
    work = accumulation(dtype)
    in_order, k_order, out_order = _canonical_conv(instruction)
    dy = np.transpose(np.asarray(operands[0]).astype(work), out_order)
    k = np.transpose(np.asarray(operands[1]).astype(work), k_order)
    groups = _grouped(instruction)
    in_dims = [result.dims[d] for d in in_order]
    window = instruction.window or ()
    padded = [s + w.padding_low + w.padding_high for s, w in zip(in_dims[2:], window, strict=True)]
    n, o = dy.shape[:2]
    i = k.shape[1]
    dyg = dy.reshape(n, groups, o // groups, *dy.shape[2:])
    kg = k.reshape(groups, o // groups, i, *k.shape[2:])
    dx = np.zeros((n, groups, i, *padded), work)
    for w, slices in _window_slices(instruction, dy.shape[2:]):
        # Concatenated: numpy's stubs reject a starred index display.
        dx[(Ellipsis,) + slices] += np.einsum(  # noqa: RUF005
            "ngo...,goi->ngi...", dyg, kg[(Ellipsis,) + w])  # noqa: RUF005
    crop = tuple(slice(d.padding_low, d.padding_low + s) for d, s in zip(window, in_dims[2:],
                                                                          strict=True))
    dx = dx[(Ellipsis,) + crop].reshape(n, groups * i, *in_dims[2:])  # noqa: RUF005
    value = dx * float(config.get("conv_result_scale", 1))
    return _with_workspace(instruction, np.transpose(value, np.argsort(in_order)).astype(dtype))


@handles_custom_call("__cudnn$convBackwardFilter")
def conv_backward_filter(interpreter: Interpreter, instruction: Instruction,
                         operands: list[Value]) -> Value:
    """The forward convolution's gradient with respect to its kernel."""
    config = _conv_config(instruction)
    result = _array_result(instruction)
    dtype = dtypes.dtype_of(result.element_type)
    work = accumulation(dtype)
    in_order, k_order, out_order = _canonical_conv(instruction)
    x = np.transpose(np.asarray(operands[0]).astype(work), in_order)
    dy = np.transpose(np.asarray(operands[1]).astype(work), out_order)
    groups = _grouped(instruction)
    window = instruction.window or ()
    x = np.pad(x, [(0, 0), (0, 0)] + [(w.padding_low, w.padding_high) for w in window])
    n, c = x.shape[:2]
    o = dy.shape[1]
    xg = x.reshape(n, groups, c // groups, *x.shape[2:])
    dyg = dy.reshape(n, groups, o // groups, *dy.shape[2:])
    k_dims = [result.dims[d] for d in k_order]
    dk = np.zeros((groups, o // groups, c // groups, *k_dims[2:]), work)
    spatial = "".join(chr(ord("p") + j) for j in range(len(window)))
    for w, slices in _window_slices(instruction, dy.shape[2:]):
        dk[(Ellipsis,) + w] = np.einsum(  # noqa: RUF005
            f"ngi{spatial},ngo{spatial}->goi", xg[(Ellipsis,) + slices], dyg)  # noqa: RUF005
    value = dk.reshape(k_dims) * float(config.get("conv_result_scale", 1))
    return _with_workspace(instruction, np.transpose(value, np.argsort(k_order)).astype(dtype))


# --- cuDNN fused attention ------------------------------------------------------------------

def _dot_numbers(config: dict[str, Any], key: str) -> DotDimensionNumbers:
    numbers = config.get(key) or {}

    def dims(name: str) -> tuple[int, ...]:
        return tuple(int(d) for d in numbers.get(name, []))
    return DotDimensionNumbers(dims("lhs_contracting_dimensions"),
                               dims("rhs_contracting_dimensions"),
                               dims("lhs_batch_dimensions"), dims("rhs_batch_dimensions"))


def _dot(interpreter: Interpreter, lhs: np.ndarray, rhs: np.ndarray,
         numbers: DotDimensionNumbers) -> np.ndarray:
    """XLA's dot in f32 (cuDNN accumulates in f32 whatever the operand type)."""
    lhs_free = [d for d in range(lhs.ndim)
                if d not in numbers.lhs_batch_dims + numbers.lhs_contracting_dims]
    rhs_free = [d for d in range(rhs.ndim)
                if d not in numbers.rhs_batch_dims + numbers.rhs_contracting_dims]
    dims = (*(lhs.shape[d] for d in numbers.lhs_batch_dims), *(lhs.shape[d] for d in lhs_free),
            *(rhs.shape[d] for d in rhs_free))
    instruction = Instruction("fmha.dot", "dot", Shape("f32", dims), dot_dimension_numbers=numbers)
    return np.asarray(dot(interpreter, instruction,
                          [lhs.astype(np.float32), rhs.astype(np.float32)]))


_CAUSAL_MASKS = ("CAUSAL", "PADDING_CAUSAL")
_PADDING_MASKS = ("PADDING", "PADDING_CAUSAL")


def _attention_mask(instruction: Instruction, config: dict[str, Any], shape: tuple[int, ...],
                    lengths: list[np.ndarray]) -> np.ndarray | None:
    """Which (query, key) scores of `shape` (batch..., queries, keys) take part, as cuDNN
    reads `mask_type` (CAUSAL: key <= query; PADDING: query < its batch's q_seqlen and key <
    kv_seqlen, the lengths indexing the first batch dimension; PADDING_CAUSAL both) and
    `sliding_window_length` L (key in (query - L, query]); None when all do."""
    target = instruction.custom_call_target
    mask = config.get("mask_type", "NO_MASK")
    if mask not in ("NO_MASK", *_CAUSAL_MASKS, *_PADDING_MASKS):
        raise Unsupported(f"custom-call {target} mask_type {mask}")
    if int(config.get("max_seg_per_batch", 1) or 1) > 1:
        raise Unsupported(f"custom-call {target} with packed segments (max_seg_per_batch)")
    if config.get("is_paged_attention"):
        raise Unsupported(f"custom-call {target} with paged attention")
    rows, cols = shape[-2:]
    query, key = np.arange(rows)[:, None], np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if mask in _CAUSAL_MASKS:
        keep &= key <= query
    window = int(config.get("sliding_window_length", 0) or 0)
    if window:
        keep &= key > query - window
    if mask in _PADDING_MASKS:
        if len(lengths) != 2:
            raise EvaluationError(f"{instruction.name}: {target} with mask_type {mask} and "
                                  f"{len(lengths)} sequence-length operands (2 expected)")
        per_batch = (-1,) + (1,) * (len(shape) - 1)
        q_lengths, kv_lengths = (np.asarray(x).reshape(per_batch) for x in lengths)
        return keep & (query < q_lengths) & (key < kv_lengths)
    return None if keep.all() else keep


def _softmax(scores: np.ndarray, keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """Softmax over the last dimension of the scores that take part (`keep`), with each row's
    maximum and sum of exponentials; a row where none does (a padded query) has all-zero
    weights, so its output is zero, as cuDNN writes it."""
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    maximum = scores.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        weights = np.exp(scores - np.where(np.isfinite(maximum), maximum, 0))
    total = weights.sum(axis=-1, keepdims=True)
    return weights / np.where(total > 0, total, 1), maximum, total


def _split_operands(arrays: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The float operands, and the integer ones (q_seqlen, kv_seqlen), each in order."""
    return ([a for a in arrays if a.dtype.kind not in "iu"],
            [a for a in arrays if a.dtype.kind in "iu"])


@handles_custom_call("__cudnn$fmhaSoftmax", "__cudnn$fmhaScaleBiasSoftmax",
                     "__cudnn$fmhaScaleMaskSoftmax", "__cudnn$fmhaSoftmaxDropout",
                     "__cudnn$fmhaScaleBiasSoftmaxDropout", "__cudnn$fmhaBiasSoftmax")
def fmha_softmax(interpreter: Interpreter, instruction: Instruction,
                 operands: list[Value]) -> Value:
    """Softmax attention from (Q, K, V, [bias], [q_seqlen, kv_seqlen])."""
    config = json_config(instruction, "cudnn_fmha_backend_config")
    target = instruction.custom_call_target
    if float(config.get("dropout_rate", 0.0)) != 0.0:
        raise Unsupported(f"custom-call {target} with dropout")
    (q, k, v, *rest), lengths = _split_operands([np.asarray(x) for x in operands])
    scores = _dot(interpreter, q, k, _dot_numbers(config, "bmm1_dot_dimension_numbers"))
    scores = scores * float(config.get("fmha_scale", 1.0))
    if "Bias" in (target or "") or (rest and rest[0].ndim == scores.ndim):
        if not rest:
            raise EvaluationError(f"{instruction.name}: {target} without its bias")
        scores = scores + np.broadcast_to(rest[0].astype(np.float32), scores.shape)
    weights, maximum, total = _softmax(
        scores, _attention_mask(instruction, config, scores.shape, lengths))
    result = _array_result(instruction)
    dtype = dtypes.dtype_of(result.element_type)
    weights = dtypes.convert(weights, dtype)  # cuDNN's second product reads P in the input type
    out = _dot(interpreter, weights, v, _dot_numbers(config, "bmm2_dot_dimension_numbers"))
    if out.shape != result.dims:
        raise EvaluationError(f"{instruction.name}: attention gives {out.shape}, "
                              f"the result is {result.dims}")
    value = _with_workspace(instruction, dtypes.convert(out, dtype))
    shapes = instruction.shape.tuple_shapes if instruction.shape.is_tuple else ()
    if len(shapes) == 3 and shapes[1].element_type == "f32":
        # The training form's second result: each row's softmax statistics, the log of the
        # sum of exp(scores) (cuDNN's logsumexp `Stats`), which the backward call reads.
        with np.errstate(divide="ignore"):
            stats = (maximum + np.log(total)).reshape(shapes[1].dims).astype(np.float32)
        return (value[0], stats, *value[2:])
    return value


def _operand_order(numbers: DotDimensionNumbers, rank: int, rhs: bool) -> list[int]:
    """An operand's dimensions as (batch..., the contracted one, the rest): the order a dot
    contracting that dimension leaves them in."""
    batch = numbers.rhs_batch_dims if rhs else numbers.lhs_batch_dims
    contracted = numbers.rhs_contracting_dims if rhs else numbers.lhs_contracting_dims
    return [*batch, *contracted, *(d for d in range(rank) if d not in (*batch, *contracted))]


def _as_operand(value: np.ndarray, order: list[int], dims: tuple[int, ...]) -> np.ndarray:
    """A gradient in (batch..., sequence, head) order back in its operand's dimension order,
    or as it is when the result is declared in that order."""
    if value.shape == dims:
        return value
    moved = np.transpose(value, np.argsort(order))
    if moved.shape != dims:
        raise EvaluationError(f"a gradient of shape {value.shape} fits no result of {dims}")
    return moved


@handles_custom_call("__cudnn$fmhaSoftmaxBackward", "__cudnn$fmhaScaleBiasSoftmaxBackward",
                     "__cudnn$fmhaBiasSoftmaxBackward", "__cudnn$fmhaScaleMaskSoftmaxBackward",
                     "__cudnn$fmhaSoftmaxDropoutBackward",
                     "__cudnn$fmhaScaleBiasSoftmaxDropoutBackward")
def fmha_softmax_backward(interpreter: Interpreter, instruction: Instruction,
                          operands: list[Value]) -> Value:
    """(dQ, dK, dV, [dbias], workspace) of softmax attention from (Q, K, V, stats, dO,
    [bias], O, [q_seqlen, kv_seqlen]), masked as the forward call is (`_attention_mask`).

    The four backward products' dot dimension numbers (`bmm1_grad_gemm1`: dS^T.Q = dK,
    `bmm1_grad_gemm2`: dS.K = dQ, `bmm2_grad_gemm1`: P^T.dO = dV, `bmm2_grad_gemm2`:
    dO.V^T = dP) also say where each operand's batch, sequence and head dimensions are. The
    scores are recomputed as the forward call computes them (P exactly softmax, rather than
    exp(S - stats)); dS = P * (dP - rowsum(dP * P)) * fmha_scale."""
    config = json_config(instruction, "cudnn_fmha_backend_config")
    target = instruction.custom_call_target
    if float(config.get("dropout_rate", 0.0)) != 0.0:
        raise Unsupported(f"custom-call {target} with dropout")
    shapes = instruction.shape.tuple_shapes
    (q, k, v, _stats, d_out, *rest), lengths = _split_operands(
        [np.asarray(x) for x in operands])
    bias = rest[0] if "Bias" in (target or "") and len(rest) == 2 else None
    if len(shapes) not in (4, 5) or (len(shapes) == 5 and bias is None):
        raise EvaluationError(f"{instruction.name}: {target} with {len(shapes)} results and "
                              f"{'a' if bias is not None else 'no'} bias")
    dk_numbers = _dot_numbers(config, "bmm1_grad_gemm1_dot_dimension_numbers")
    dq_numbers = _dot_numbers(config, "bmm1_grad_gemm2_dot_dimension_numbers")
    dv_numbers = _dot_numbers(config, "bmm2_grad_gemm1_dot_dimension_numbers")
    dp_numbers = _dot_numbers(config, "bmm2_grad_gemm2_dot_dimension_numbers")
    q_order = _operand_order(dk_numbers, q.ndim, rhs=True)  # batch, sequence, head
    k_order = _operand_order(dq_numbers, k.ndim, rhs=True)
    scale = float(config.get("fmha_scale", 1.0))
    batch = len(q_order) - 2
    scores_numbers = DotDimensionNumbers((q_order[-1],), (k_order[-1],),
                                         tuple(q_order[:batch]), tuple(k_order[:batch]))
    scores = _dot(interpreter, q, k, scores_numbers) * scale
    if bias is not None:
        scores = scores + np.broadcast_to(bias.astype(np.float32), scores.shape)
    weights, _, _ = _softmax(scores, _attention_mask(instruction, config, scores.shape,
                                                      lengths))
    d_weights = _dot(interpreter, d_out, v, dp_numbers)
    d_biased = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))
    d_scores = d_biased * scale
    d_q = _dot(interpreter, d_scores, k, dq_numbers)
    d_k = _dot(interpreter, d_scores, q, dk_numbers)
    d_v = _dot(interpreter, weights, d_out, dv_numbers)
    v_order = _operand_order(dp_numbers, v.ndim, rhs=True)
    v_order = [*v_order[:batch], v_order[-1], v_order[batch]]  # V contracts its head dim
    results = [_as_operand(d_q, q_order, shapes[0].dims), _as_operand(d_k, k_order, shapes[1].dims),
               _as_operand(d_v, v_order, shapes[2].dims)]
    if len(shapes) == 5:  # dbias: the scores' gradient summed where the bias is broadcast
        results.append(_summed_to(d_biased, shapes[3].dims, instruction.name))
    workspace = np.zeros(shapes[-1].dims, dtypes.dtype_of(shapes[-1].element_type))
    converted = (dtypes.convert(r, dtypes.dtype_of(s.element_type))
                 for r, s in zip(results, shapes, strict=False))
    return (*converted, workspace)


def _summed_to(value: np.ndarray, dims: tuple[int, ...], name: str) -> np.ndarray:
    """`value` summed over the dimensions a value of `dims` is broadcast along to its shape
    (a bias shared by the batch, or by the heads, gets the sum of their gradients)."""
    lead = value.ndim - len(dims)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(dims)
                                      if d == 1 and value.shape[lead + i] != 1)
    summed = value.sum(axis=axes, keepdims=True) if axes else value
    if summed.size != int(np.prod(dims)):
        raise EvaluationError(f"{name}: a bias gradient of shape {value.shape} fits no result "
                              f"of {dims}")
    return summed.reshape(dims)


# --- CUB ---------------------------------------------------------------------------------------

@handles_custom_call("__cub$DeviceRadixSort")
def cub_radix_sort(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """(keys, [values]) -> (keys sorted along their last dimension, [values in the same
    order], u8[] scratch): the sort XLA's sort rewriter hands to CUB's stable radix sort,
    batched over the leading dimensions, descending when `SortOptions.descending` says so."""
    shapes = instruction.shape.tuple_shapes if instruction.shape.is_tuple else ()
    arrays = [np.asarray(x) for x in operands]
    if not arrays or len(shapes) != len(arrays) + 1:
        raise EvaluationError(f"{instruction.name}: {instruction.custom_call_target} with "
                              f"{len(arrays)} operands and {len(shapes)} results")
    keys = _radix_keys(arrays[0])
    if json_config(instruction).get("descending"):
        last = keys.shape[-1] - 1
        order = (last - np.argsort(keys[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
    else:
        order = np.argsort(keys, axis=-1, kind="stable")
    scratch = np.zeros(shapes[-1].dims, dtypes.dtype_of(shapes[-1].element_type))
    return (*(np.take_along_axis(a, order, axis=-1) for a in arrays), scratch)


def _radix_keys(keys: np.ndarray) -> np.ndarray:
    """Keys that order as CUB's radix sort orders `keys`: integers as they are; floats by
    their bits made monotonic (sign bit set: all bits flipped, else the sign bit set), -0.0
    and +0.0 as equal, so NaNs order by their sign bit, before -inf or after +inf."""
    if keys.dtype.kind in "biu":
        return keys
    if keys.dtype.kind == "c":
        raise Unsupported("custom-call __cub$DeviceRadixSort of complex keys")
    width = keys.dtype.itemsize * 8
    bits = np.where(keys == 0, 0, keys.view(f"u{keys.dtype.itemsize}")).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(width - 1)
    every = np.uint64((1 << width) - 1)
    return np.where(bits & sign, ~bits & every, bits | sign)


# --- cuBLAS and cuSOLVER ----------------------------------------------------------------------

_EPILOGUES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "DEFAULT": lambda x: x, "BIAS": lambda x: x,
    "RELU": lambda x: np.maximum(x, 0), "BIAS_RELU": lambda x: np.maximum(x, 0),
    # cuBLASLt's GELU is the tanh approximation
    "GELU": lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3))),
}
_EPILOGUES["BIAS_GELU"] = _EPILOGUES["GELU"]


@handles_custom_call("__cublas$gemm", "__cublas$lt$matmul")
def cublas_gemm(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    """`epilogue(alpha * dot(a, b) + beta * c + bias)`, from `gemm_backend_config`."""
    result = _array_result(instruction)
    dtype = dtypes.dtype_of(result.element_type)
    total = _gemm(interpreter, instruction, operands, result.element_type, accumulation(dtype))
    return _with_workspace(instruction, dtypes.convert(total, dtype))


def _gemm(interpreter: Interpreter, instruction: Instruction, operands: list[Value],
          product_type: str, work: np.dtype, a_scale: float = 1.0, b_scale: float = 1.0,
          c_scale: float = 1.0) -> np.ndarray:
    """`epilogue(alpha * a_scale * b_scale * dot(a, b) + beta * c_scale * c + bias)` in
    `work`, the product computed as a dot to `product_type`; operands after a and b are c
    (with beta) and the bias (with a BIAS epilogue), in that order."""
    config = json_config(instruction, "gemm_backend_config")
    target = instruction.custom_call_target
    epilogue = str(config.get("epilogue", "DEFAULT"))
    if epilogue not in _EPILOGUES or float(config.get("alpha_imag", 0) or 0):
        raise Unsupported(f"custom-call {target} epilogue {epilogue}")
    result = _array_result(instruction)
    numbers = _dot_numbers(config, "dot_dimension_numbers")
    plain = Instruction(instruction.name, "dot", Shape(product_type, result.dims),
                        dot_dimension_numbers=numbers)
    total = np.asarray(dot(interpreter, plain, operands[:2])).astype(work)
    total = total * (float(config.get("alpha_real", 1)) * a_scale * b_scale)
    rest = [np.asarray(x) for x in operands[2:]]
    beta = float(config.get("beta", 0) or 0)
    if beta:
        if not rest:
            raise EvaluationError(f"{instruction.name}: {target} with beta and no addend")
        total = total + beta * c_scale * rest.pop(0).astype(work)
    if epilogue.startswith("BIAS"):
        if not rest:
            raise EvaluationError(f"{instruction.name}: {target} {epilogue} without its bias")
        total = total + rest.pop(0).astype(work)  # a vector along the last dimension
    return _EPILOGUES[epilogue](total)


@handles_custom_call("__cublas$lt$matmul$f8")
def cublas_lt_matmul_f8(interpreter: Interpreter, instruction: Instruction,
                        operands: list[Value]) -> Value:
    """cuBLASLt's FP8 matmul with per-tensor scales, as XLA's gemm rewriter passes them after
    a, b (and c with beta): a_scale, b_scale, then c_scale and d_scale, or d_scale alone, or
    neither. `d_scale * epilogue(alpha * a_scale * b_scale * a.b + beta * c_scale * c + bias)`
    in f32, converted (saturating, as XLA's clamp before the f8 convert) to the result type."""
    config = json_config(instruction, "gemm_backend_config")
    target = instruction.custom_call_target
    if int(config.get("scale_mode", 1) or 1) != 1:
        raise Unsupported(f"custom-call {target} scale_mode {config.get('scale_mode')}")
    with_c = bool(float(config.get("beta", 0) or 0))
    head = 3 if with_c else 2
    scales = [np.asarray(x) for x in operands[head:]]
    count = next((k for k, x in enumerate(scales) if x.ndim), len(scales))
    if count not in (2, 3, 4) or any(x.size != 1 for x in scales[:count]):
        raise Unsupported(f"custom-call {target} with {count} per-tensor scales")
    a_scale, b_scale, *more = (float(x.astype(np.float64)) for x in scales[:count])
    c_scale, d_scale = (more if len(more) == 2 else (1.0, *more) if more else (1.0, 1.0))
    rest = list(operands[:head]) + list(operands[head + count:])
    total = _gemm(interpreter, instruction, rest, "f32", np.dtype(np.float32),
                  a_scale, b_scale, c_scale) * np.float32(d_scale)
    result = _array_result(instruction)
    dtype = dtypes.dtype_of(result.element_type)
    if result.element_type.startswith("f8"):
        import ml_dtypes

        largest = float(ml_dtypes.finfo(dtype).max)
        total = np.clip(total, -largest, largest)
    return _with_workspace(instruction, dtypes.convert(total, dtype))


@handles_custom_call("__cublas$triangularSolve")
def cublas_triangular_solve(interpreter: Interpreter, instruction: Instruction,
                            operands: list[Value]) -> Value:
    config = json_config(instruction)
    a, b = (np.asarray(x) for x in operands)
    x = triangular_solve(a, b, bool(config.get("left_side", False)),
                         bool(config.get("lower", False)),
                         str(config.get("transpose_a", "NO_TRANSPOSE")),
                         bool(config.get("unit_diagonal", False)))
    return _with_workspace(instruction, x)


def _batched(a: np.ndarray, solve: Callable[[np.ndarray], list[Any]]) -> list[np.ndarray]:
    """`solve` per matrix of the leading batch dimensions; its outputs stacked back."""
    batch = a.shape[:-2]
    outputs = [solve(m) for m in a.reshape(-1, *a.shape[-2:])]
    return [np.asarray([o[j] for o in outputs]).reshape(batch + np.shape(outputs[0][j]))
            for j in range(len(outputs[0]))] if outputs else []


def _lapack(dtype: np.dtype, name: str) -> Callable[..., Any]:
    from scipy.linalg import lapack
    prefix = {"f": "s", "d": "d", "F": "c", "D": "z"}.get(np.dtype(dtype).char)
    if prefix is None:
        raise Unsupported(f"cuSOLVER on {dtype}")
    return getattr(lapack, prefix + name)


def _lower(instruction: Instruction) -> bool:
    return bool(parse_backend_config(instruction.backend_config).get("lower", False))


@handles_custom_call("cusolver_potrf_ffi")
def cusolver_potrf(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """Cholesky of the `lower` (or upper) triangle; the other triangle keeps the input."""
    a = np.asarray(operands[0])
    potrf = _lapack(a.dtype, "potrf")
    lower = _lower(instruction)
    factor, info = _batched(a, lambda m: list(potrf(m, lower=int(lower), clean=0)))
    return factor.astype(a.dtype), info.astype(np.int32)


@handles_custom_call("cusolver_getrf_ffi")
def cusolver_getrf(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    a = np.asarray(operands[0])
    getrf = _lapack(a.dtype, "getrf")
    lu, pivots, info = _batched(a, lambda m: list(getrf(m)))
    return lu.astype(a.dtype), (pivots + 1).astype(np.int32), info.astype(np.int32)


@handles_custom_call("cusolver_syevd_ffi")
def cusolver_syevd(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """Eigenvalues ascending and eigenvectors as columns, from the `lower` (or upper) triangle."""
    a = np.asarray(operands[0])
    name = "heevd" if np.iscomplexobj(a) else "syevd"
    syevd = _lapack(a.dtype, name)
    lower = _lower(instruction)
    values, vectors, info = _batched(a, lambda m: list(syevd(m, compute_v=1, lower=int(lower))))
    return (vectors.astype(a.dtype), values.astype(np.real(a).dtype), info.astype(np.int32))


@handles_custom_call("cu_lu_pivots_to_permutation")
def lu_pivots_to_permutation(interpreter: Interpreter, instruction: Instruction,
                             operands: list[Value]) -> Value:
    """Row swaps (0-based, applied in order) to the permutation they make of 0..n-1."""
    pivots = np.asarray(operands[0]).astype(np.int64)
    size = instruction.shape.dims[-1]
    flat = pivots.reshape(-1, pivots.shape[-1])
    permutations = np.tile(np.arange(size, dtype=np.int64), (flat.shape[0], 1))
    for row, swaps in zip(permutations, flat, strict=True):
        for i, j in enumerate(swaps):
            if not 0 <= j < size:
                raise EvaluationError(f"{instruction.name}: pivot {j} outside 0..{size - 1}")
            row[[i, j]] = row[[j, i]]
    return permutations.reshape((*pivots.shape[:-1], size)).astype(np.int32)


def _batch_of(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, *a.shape[-2:])


@handles_custom_call("cusolver_geqrf_ffi")
def cusolver_geqrf(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """Householder QR in LAPACK's form: R on and above the diagonal, the reflectors below."""
    a = np.asarray(operands[0])
    geqrf = _lapack(a.dtype, "geqrf")
    qr, tau, *_ = _batched(a, lambda m: list(geqrf(m))[:2])
    return qr.astype(a.dtype), tau.astype(a.dtype)


@handles_custom_call("cusolver_orgqr_ffi")
def cusolver_orgqr(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """Q of the reflectors of `geqrf`, with the result's number of columns."""
    a, tau = (np.asarray(x) for x in operands)
    name = "ungqr" if np.iscomplexobj(a) else "orgqr"
    orgqr = _lapack(a.dtype, name)
    columns = instruction.shape.dims[-1]
    if columns > a.shape[-1]:
        a = np.concatenate([a, np.zeros((*a.shape[:-1], columns - a.shape[-1]), a.dtype)], -1)
    taus = tau.reshape(-1, tau.shape[-1])
    results = [orgqr(m[:, :columns], t)[0] for m, t in zip(_batch_of(a), taus, strict=True)]
    return np.asarray(results).reshape((*a.shape[:-1], columns)).astype(a.dtype)


@handles_custom_call("cusolver_gesvd_ffi", "cusolver_gesvdj_ffi")
def cusolver_gesvd(interpreter: Interpreter, instruction: Instruction,
                   operands: list[Value]) -> Value:
    """Singular values descending and, with `compute_uv`, u and vt (square with
    `full_matrices`, else thin), shaped as the result declares."""
    a = np.asarray(operands[0])
    config = parse_backend_config(instruction.backend_config)
    compute_uv = bool(config.get("compute_uv", True))
    full = bool(config.get("full_matrices", True))
    shapes = instruction.shape.tuple_shapes
    if len(shapes) != 5:
        raise EvaluationError(f"{instruction.name}: {instruction.custom_call_target} gives "
                              f"{len(shapes)} results, not (a, s, u, vt, info)")
    gesvd = _lapack(a.dtype, "gesvd")
    outputs = _batched(a, lambda m: list(gesvd(m, compute_uv=int(compute_uv),
                                               full_matrices=int(full)))[:4])
    u, s, vt, info = outputs
    real = np.real(a).dtype
    if not compute_uv:
        u = np.zeros(shapes[2].dims, a.dtype)
        vt = np.zeros(shapes[3].dims, a.dtype)
    if u.shape != shapes[2].dims or vt.shape != shapes[3].dims:
        raise EvaluationError(f"{instruction.name}: u {u.shape} and vt {vt.shape} do not fit "
                              f"the result's {shapes[2].dims} and {shapes[3].dims} "
                              f"(full_matrices={full})")
    return (a.copy(), s.astype(real), u.astype(a.dtype), vt.astype(a.dtype),
            np.asarray(info).astype(np.int32).reshape(shapes[4].dims))


_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(key: tuple[np.ndarray, np.ndarray],
                 count: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32, 20 rounds (Salmon et al. 2011), as `jax.random` computes it."""
    k0, k1 = (np.asarray(k, np.uint32) for k in key)
    keys = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    x0, x1 = (np.asarray(x, np.uint32).copy() for x in count)
    with np.errstate(over="ignore"):
        x0, x1 = x0 + keys[0], x1 + keys[1]
        for block in range(5):
            for rotation in _THREEFRY_ROTATIONS[block % 2]:
                x0 = x0 + x1
                x1 = (x1 << np.uint32(rotation)) | (x1 >> np.uint32(32 - rotation))
                x1 = x0 ^ x1
            x0 = x0 + keys[(block + 1) % 3]
            x1 = x1 + keys[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


@handles_custom_call("cu_threefry2x32_ffi", "cu_threefry2x32")
def cu_threefry(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    if len(operands) != 4:
        raise EvaluationError(f"{instruction.name}: threefry takes (k0, k1, x0, x1), got "
                              f"{len(operands)} operands")
    shape = instruction.shape.tuple_shapes[0].dims
    k0, k1, x0, x1 = (np.broadcast_to(np.asarray(x, np.uint32), shape) for x in operands)
    return threefry2x32((k0, k1), (x0, x1))

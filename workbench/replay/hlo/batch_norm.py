"""`batch-norm-training`, `batch-norm-inference` and `batch-norm-grad`, as XLA's Operation
Semantics define them: statistics over every dimension but `feature_index`, the biased
variance, and `epsilon` added to it before the square root.

PyTorch/XLA lowers LayerNorm and BatchNorm to these ops (TensorFlow's fused batch norm too);
XLA's `batchnorm_expander` rewrites them into reductions and elementwise ops later in the
pipeline, computing in the operand's type (a narrow float in f32, as the CPU compiler's float
normalization does). The evaluator computes the definition the same way: f32 for f32 and the
narrow floats, f64 for f64 (the shadow), each result rounded once to its declared type.
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.dtypes import compute_dtype, dtype_of, kind_of
from workbench.replay.hlo.registry import Value, handles

_OPERANDS = {"batch-norm-training": 3, "batch-norm-inference": 5, "batch-norm-grad": 5}


def _attributes(instruction: Instruction, rank: int) -> tuple[float, int]:
    """(epsilon, feature_index) of a batch-norm instruction, checked against the operand's
    rank."""
    try:
        epsilon = float(instruction.attrs.get("epsilon", "0"))
        feature_index = int(instruction.attrs.get("feature_index", "0"))
    except ValueError:
        raise EvaluationError(f"{instruction.name}: unreadable epsilon or feature_index "
                              f"({instruction.attrs.get('epsilon')!r}, "
                              f"{instruction.attrs.get('feature_index')!r})") from None
    if not 0 <= feature_index < rank:
        raise EvaluationError(f"{instruction.name}: feature_index {feature_index} of a "
                              f"rank-{rank} operand")
    return epsilon, feature_index


def _prepared(instruction: Instruction, operands: list[Value]
              ) -> tuple[list[np.ndarray], float, int, tuple[int, ...], np.dtype]:
    """The operands in the type the statistics are computed in, with epsilon, the feature
    axis, the reduced axes and the declared element type."""
    expected = _OPERANDS[instruction.opcode]
    if len(operands) != expected:
        raise EvaluationError(f"{instruction.name}: {instruction.opcode} takes {expected} "
                              f"operands, got {len(operands)}")
    arrays = [np.asarray(operand) for operand in operands]
    declared = arrays[0].dtype
    if kind_of(declared) not in ("float", "narrow"):
        raise Unsupported(f"{instruction.opcode} of {declared}")
    wide = compute_dtype(declared)
    epsilon, feature = _attributes(instruction, arrays[0].ndim)
    features = arrays[0].shape[feature]
    for index, array in enumerate(arrays[1:], start=1):
        if array.shape != arrays[0].shape and array.shape != (features,):
            raise EvaluationError(f"{instruction.name}: operand {index} has shape "
                                  f"{list(array.shape)}, not [{features}] or the operand's")
    axes = tuple(axis for axis in range(arrays[0].ndim) if axis != feature)
    return [a.astype(wide, copy=False) for a in arrays], epsilon, feature, axes, declared


def _per_feature(vector: np.ndarray, rank: int, feature: int) -> np.ndarray:
    """A per-feature vector shaped to broadcast along `feature` of a rank-`rank` array."""
    shape = [1] * rank
    shape[feature] = vector.shape[0]
    return vector.reshape(shape)


def _declared(instruction: Instruction, part: int) -> np.dtype:
    shape = instruction.shape
    return dtype_of((shape.tuple_shapes[part] if shape.is_tuple else shape).element_type)


@handles("batch-norm-training")
def batch_norm_training(interpreter: object, instruction: Instruction,
                        operands: list[Value]) -> Value:
    """(normalized, batch mean, batch variance): `scale * (x - mean) / sqrt(var + epsilon)
    + offset` with the biased variance of `x` over every dimension but the feature."""
    (x, scale, offset), epsilon, feature, axes, _ = _prepared(instruction, operands)
    mean = np.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    variance = np.mean(centred * centred, axis=axes, keepdims=True)
    wide = x.dtype.type
    normalized = centred / np.sqrt(variance + wide(epsilon))
    output = normalized * _per_feature(scale, x.ndim, feature) + \
        _per_feature(offset, x.ndim, feature)
    return (output.astype(_declared(instruction, 0)),
            mean.reshape(-1).astype(_declared(instruction, 1)),
            variance.reshape(-1).astype(_declared(instruction, 2)))


@handles("batch-norm-inference")
def batch_norm_inference(interpreter: object, instruction: Instruction,
                         operands: list[Value]) -> Value:
    """`scale * (x - mean) / sqrt(variance + epsilon) + offset` with the given statistics."""
    (x, scale, offset, mean, variance), epsilon, feature, _, _ = _prepared(instruction,
                                                                          operands)
    wide = x.dtype.type

    def along(vector: np.ndarray) -> np.ndarray:
        return _per_feature(vector, x.ndim, feature)

    output = (x - along(mean)) / np.sqrt(along(variance) + wide(epsilon)) * along(scale) + \
        along(offset)
    return output.astype(_declared(instruction, 0))


@handles("batch-norm-grad")
def batch_norm_grad(interpreter: object, instruction: Instruction,
                    operands: list[Value]) -> Value:
    """(grad operand, grad scale, grad offset) of batch-norm-training at `x` with the given
    mean and variance, for the output's gradient `g` (Operation Semantics, BatchNormGrad):

        grad_offset  = sum(g)
        grad_scale   = sum(g * (x - mean)) / sqrt(var + epsilon)
        grad_operand = scale / sqrt(var + epsilon)
                       * (g - mean(g) - (x - mean) * mean(g * (x - mean)) / (var + epsilon))
    """
    (x, scale, mean, variance, grad), epsilon, feature, axes, _ = _prepared(instruction,
                                                                           operands)
    if grad.shape != x.shape:
        raise EvaluationError(f"{instruction.name}: grad_output shape {list(grad.shape)} is "
                              f"not the operand's {list(x.shape)}")
    wide = x.dtype.type

    def along(vector: np.ndarray) -> np.ndarray:
        return _per_feature(vector, x.ndim, feature)

    count = wide(x.size // max(x.shape[feature], 1))
    centred = x - along(mean)
    shifted_variance = along(variance) + wide(epsilon)
    inverse_deviation = wide(1) / np.sqrt(shifted_variance)
    grad_offset = np.sum(grad, axis=axes, keepdims=True)
    grad_times_centred = np.sum(grad * centred, axis=axes, keepdims=True)
    grad_scale = grad_times_centred * inverse_deviation
    grad_operand = along(scale) * inverse_deviation * (
        grad - grad_offset / count - centred * (grad_times_centred / count) / shifted_variance)
    return (grad_operand.astype(_declared(instruction, 0)),
            grad_scale.reshape(-1).astype(_declared(instruction, 1)),
            grad_offset.reshape(-1).astype(_declared(instruction, 2)))

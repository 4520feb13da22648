"""The batch-norm family against hand-computed values and the derivative of the definition,
with the attributes as PyTorch/XLA writes them (`epsilon=1e-05, feature_index=1`)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Shape
from workbench.replay.errors import EvaluationError, Unsupported

f32 = np.float32
f64 = np.float64


def _tuple(element_type: str, dims: tuple[int, ...], features: int) -> Shape:
    vector = Shape(element_type, (features,))
    return Shape("tuple", tuple_shapes=(Shape(element_type, dims), vector, vector))


def training(x: np.ndarray, scale: np.ndarray, offset: np.ndarray, epsilon: float,
             feature: int, element_type: str = "f32") -> tuple:
    return run("batch-norm-training", _tuple(element_type, x.shape, scale.shape[0]),
               x, scale, offset, attrs={"epsilon": repr(epsilon), "feature_index": str(feature)})


def grad(x: np.ndarray, scale: np.ndarray, mean: np.ndarray, variance: np.ndarray,
         g: np.ndarray, epsilon: float, feature: int, element_type: str = "f64") -> tuple:
    return run("batch-norm-grad", _tuple(element_type, x.shape, x.shape[feature]),
               x, scale, mean, variance, g,
               attrs={"epsilon": repr(epsilon), "feature_index": str(feature)})


def test_training_normalizes_each_feature_with_the_biased_variance() -> None:
    x = np.array([[1, 2], [3, 6]], f32)  # feature 0: mean 2, var 1; feature 1: mean 4, var 4
    output, mean, variance = training(x, np.array([2, 3], f32), np.array([10, 20], f32),
                                      0.0, 1)
    assert_same(output, np.array([[8, 17], [12, 23]], f32))
    assert_same(mean, np.array([2, 4], f32))
    assert_same(variance, np.array([1, 4], f32))


def test_epsilon_is_added_to_the_variance_and_the_feature_may_be_any_axis() -> None:
    x = np.array([[0, 0, 0], [2, 2, 2]], f64)  # feature 0 along axis 0: zero variance
    output, mean, variance = training(x, np.ones(2, f64), np.zeros(2, f64), 0.25, 0, "f64")
    assert_same(output, np.zeros((2, 3), f64))  # (x - mean) / sqrt(0 + 0.25) with x == mean
    assert_same(mean, np.array([0, 2], f64))
    x = np.array([[0, 1], [2, 3]], f64)
    output, _, variance = training(x, np.ones(2, f64), np.zeros(2, f64), 3.0, 0, "f64")
    assert_same(variance, np.array([0.25, 0.25], f64))
    assert_same(output, np.array([[-0.5, 0.5], [-0.5, 0.5]], f64) / np.sqrt(3.25))


def test_inference_with_the_batch_statistics_is_training() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 3, 2, 2)).astype(f32)
    scale, offset = rng.normal(size=3).astype(f32), rng.normal(size=3).astype(f32)
    output, mean, variance = training(x, scale, offset, 1e-5, 1)
    inferred = run("batch-norm-inference", "f32", x, scale, offset, mean, variance,
                   attrs={"epsilon": "1e-05", "feature_index": "1"})
    np.testing.assert_allclose(inferred, output, rtol=1e-5, atol=1e-5)


def test_a_nan_stays_in_its_feature() -> None:
    x = np.array([[1, np.nan], [3, 5]], f32)
    output, mean, _ = training(x, np.ones(2, f32), np.zeros(2, f32), 0.0, 1)
    assert np.isnan(mean[1]) and np.isnan(output[:, 1]).all()
    assert_same(output[:, 0], np.array([-1, 1], f32))


def test_grad_is_the_derivative_of_training() -> None:
    """Each gradient against central differences of sum(g * training(x, scale, offset))."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 2, 4))
    scale, offset, g = rng.normal(size=2), rng.normal(size=2), rng.normal(size=(3, 2, 4))
    epsilon, feature = 0.1, 1

    def loss(x: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> float:
        return float(np.sum(g * training(x, scale, offset, epsilon, feature, "f64")[0]))

    def numeric(values: list[np.ndarray], which: int) -> np.ndarray:
        out = np.zeros_like(values[which])
        for index in np.ndindex(out.shape):
            moved = [v.copy() for v in values]
            moved[which][index] += 1e-6
            up = loss(*moved)
            moved[which][index] -= 2e-6
            out[index] = (up - loss(*moved)) / 2e-6
        return out

    _, mean, variance = training(x, scale, offset, epsilon, feature, "f64")
    grad_x, grad_scale, grad_offset = grad(x, scale, mean, variance, g, epsilon, feature)
    values = [x, scale, offset]
    np.testing.assert_allclose(grad_x, numeric(values, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_scale, numeric(values, 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_offset, numeric(values, 2), rtol=1e-6, atol=1e-8)


def test_narrow_floats_compute_in_f32_and_round_once() -> None:
    import ml_dtypes

    bf16 = np.dtype(ml_dtypes.bfloat16)
    x = np.array([[1, 2], [3, 7]], bf16)
    output, mean, _ = training(x, np.ones(2, bf16), np.zeros(2, bf16), 0.0, 1, "bf16")
    wide = x.astype(f32)
    centred = wide - wide.mean(axis=0)
    expected = centred / np.sqrt((centred * centred).mean(axis=0))
    assert_same(output, expected.astype(bf16))
    assert_same(mean, np.array([2, 4.5], bf16))


def test_bad_attributes_and_types_are_named() -> None:
    x = np.ones((2, 2), f32)
    with pytest.raises(EvaluationError, match="feature_index 2 of a rank-2"):
        training(x, np.ones(2, f32), np.ones(2, f32), 0.0, 2)
    with pytest.raises(Unsupported, match="batch-norm-training of int32"):
        run("batch-norm-training", _tuple("s32", (2, 2), 2), np.ones((2, 2), np.int32),
            np.ones(2, np.int32), np.ones(2, np.int32),
            attrs={"epsilon": "0", "feature_index": "1"})

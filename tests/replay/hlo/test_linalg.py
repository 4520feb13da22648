"""triangular-solve and cholesky: hand-solved systems, every option against an independent
solve, and what XLA's CPU backend returns for singular and non-positive-definite inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, element_type, run
from workbench.hlo_ir import Shape
from workbench.replay.errors import Unsupported

f32 = np.float32
NAN = np.nan
INF = np.inf


def solve(a: np.ndarray, b: np.ndarray, left_side: bool = True, lower: bool = True,
          transpose_a: str = "NO_TRANSPOSE", unit_diagonal: bool = False) -> np.ndarray:
    attrs = {"transpose_a": transpose_a}
    for name, flag in (("left_side", left_side), ("lower", lower),
                       ("unit_diagonal", unit_diagonal)):
        if flag:  # XLA prints only the true flags
            attrs[name] = "true"
    return run("triangular-solve", Shape(_type(b), b.shape), a, b, attrs=attrs)


def cholesky(a: np.ndarray, lower: bool = True) -> np.ndarray:
    return run("cholesky", Shape(_type(a), a.shape), a, attrs={"lower": "true"} if lower else {})


def _type(x: np.ndarray) -> str:
    return element_type(x.dtype)


def test_hand_solved_systems() -> None:
    a = np.array([[2, 99], [1, 4]], f32)  # lower: the 99 is never read
    assert_same(solve(a, np.array([[2], [9]], f32)), np.array([[1], [2]], f32))
    # a^T x = b with a^T = [[2, 1], [0, 4]]
    assert_same(solve(a, np.array([[4], [8]], f32), transpose_a="TRANSPOSE"),
                np.array([[1], [2]], f32))
    # x a = b: [1, 2] @ [[2, 0], [1, 4]] = [4, 8]
    assert_same(solve(a, np.array([[4, 8]], f32), left_side=False), np.array([[1, 2]], f32))
    upper = np.array([[2, 1], [99, 4]], f32)
    assert_same(solve(upper, np.array([[4], [8]], f32), lower=False),
                np.array([[1], [2]], f32))


def test_unit_diagonal_is_not_read() -> None:
    a = np.array([[NAN, 0], [3, NAN]], f32)
    assert_same(solve(a, np.array([[1], [5]], f32), unit_diagonal=True),
                np.array([[1], [2]], f32))


def test_adjoint_conjugates() -> None:
    a = np.array([[2, 0], [1j, 1]], np.complex64)  # a^H = [[2, -1j], [0, 1]]
    b = np.array([[2 - 1j], [1]], np.complex64)
    assert_same(solve(a, b, transpose_a="ADJOINT"), np.array([[1], [1]], np.complex64))
    assert not np.allclose(solve(a, b, transpose_a="TRANSPOSE"), [[1], [1]])


def _op(a: np.ndarray, lower: bool, transpose_a: str, unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    keep = np.tril(np.ones((n, n), bool), -1 if unit_diagonal else 0)
    t = np.where(keep if lower else keep.T, a, 0)
    if unit_diagonal:
        t = t + np.eye(n)
    if transpose_a == "NO_TRANSPOSE":
        return t
    t = np.swapaxes(t, -1, -2)
    return np.conj(t) if transpose_a == "ADJOINT" else t


# batch 10 of 6x6: solved row by row (XLA's direct solve); one 40x40: by inverted blocks;
# one 150x150: two diagonal blocks of 128 and 22 (the last padded with the identity)
@pytest.mark.parametrize(("batch", "n", "dtype"), [
    ((10,), 6, np.float64), ((), 40, np.float64), ((), 150, np.float64),
    ((10,), 6, np.complex128), ((), 40, np.complex128),
])
def test_every_option_solves_its_system(batch: tuple[int, ...], n: int, dtype: type) -> None:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((*batch, n, n)) / n + np.eye(n) * 2
    if dtype is np.complex128:
        a = a + 1j * rng.standard_normal(a.shape) / n
    a = a.astype(dtype)
    for left_side, lower, transpose_a, unit in itertools.product(
            [True, False], [True, False], ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
            [True, False]):
        shape = (*batch, n, 3) if left_side else (*batch, 3, n)
        b = rng.standard_normal(shape).astype(dtype)
        x = solve(a, b, left_side, lower, transpose_a, unit)
        op = _op(a, lower, transpose_a, unit)
        product = op @ x if left_side else x @ op
        np.testing.assert_allclose(product, b, atol=1e-12, rtol=1e-12)
        assert x.dtype == dtype


def test_singular_matrices_as_xla_cpu_returns_them() -> None:
    # A zero pivot: the blocked solve (one matrix) spreads NaN, the direct solve (a batch of
    # more than 8 small matrices) divides by zero. Values from XLA's CPU backend.
    a = np.array([[2, 0, 0], [1, 0, 0], [3, 1, 1]], f32)
    b = np.ones((3, 1), f32)
    assert_same(solve(a, b), np.array([[0.5], [NAN], [NAN]], f32))
    batched = solve(np.repeat(a[None], 10, 0), np.repeat(b[None], 10, 0))
    assert_same(batched[0], np.array([[0.5], [INF], [-INF]], f32))


def test_options_must_be_there() -> None:
    a = np.eye(2, dtype=f32)
    with pytest.raises(Unsupported, match="^unsupported: triangular-solve without its options$"):
        run("triangular-solve", Shape("f32", (2, 2)), a, a)
    with pytest.raises(Unsupported, match="^unsupported: triangular-solve on int32$"):
        solve(np.eye(2, dtype=np.int32), np.eye(2, dtype=np.int32))


def test_cholesky_hand_factored() -> None:
    a = np.array([[4, 99], [2, 5]], f32)  # lower: only the lower triangle is read
    assert_same(cholesky(a), np.array([[2, 0], [1, 2]], f32))
    # upper: u^T u = a, the lower triangle ignored (XLA CPU: [[2, 1], [0, 2]])
    assert_same(cholesky(np.array([[4, 2], [99, 5]], f32), lower=False),
                np.array([[2, 1], [0, 2]], f32))


def test_cholesky_complex_as_xla_cpu() -> None:
    hermitian = np.array([[4, 0], [2j, 5]], np.complex64)
    assert_same(cholesky(hermitian), np.array([[2, 0], [1j, 2]], np.complex64))
    # the diagonal's imaginary part is divided through, not dropped (XLA CPU: 2+1.5j)
    skewed = np.array([[4 + 3j, 0], [2j, 5]], np.complex64)
    assert_same(cholesky(skewed), np.array([[2 + 1.5j, 0], [1j, 2]], np.complex64))


@pytest.mark.parametrize(("a", "expected"), [
    ([[1, 2], [2, 1]], [[NAN, NAN], [NAN, NAN]]),  # indefinite
    ([[-1, 0], [0, 4]], [[NAN, NAN], [NAN, NAN]]),
    ([[0, 0], [0, 4]], [[NAN, NAN], [NAN, NAN]]),  # 0/0 below a zero pivot, then sqrt(NaN)
    ([[4, 0], [0, 0]], [[2, 0], [0, NAN]]),  # a last zero pivot: 0/0, not flagged
    ([[4, 0], [NAN, 4]], [[NAN, NAN], [NAN, NAN]]),
])
def test_cholesky_of_non_positive_definite_as_xla_cpu(a: list, expected: list) -> None:
    assert_same(cholesky(np.array(a, f32)), np.array(expected, f32))


def test_cholesky_fails_per_batch_element() -> None:
    batch = np.array([[[4, 0], [2, 5]], [[1, 0], [2, 1]]], f32)
    assert_same(cholesky(batch), np.array([[[2, 0], [1, 2]], [[NAN, NAN], [NAN, NAN]]], f32))


def test_cholesky_reconstructs_a_large_matrix() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 130, 130))
    a = x @ np.swapaxes(x, -1, -2) + 130 * np.eye(130)
    factor = cholesky(a)
    assert np.array_equal(factor, np.tril(factor))
    np.testing.assert_allclose(factor @ np.swapaxes(factor, -1, -2), a, rtol=0,
                               atol=1e-12 * np.abs(a).max())

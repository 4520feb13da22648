"""jaxlib's LAPACK custom-calls and `tridiagonal_solve_perturbed_ffi`: every routine and element
type checked by the identity it must satisfy (computed in the same run, so the test holds on
any LAPACK build), batch dimensions, info codes for singular and non-finite inputs; and the
real JAX dumps in tests/data/linalg reproduced within tolerance."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.hlo_builders import element_type, run
from workbench.hlo_ir import Shape
from workbench.index import scan
from workbench.loader import load_snapshot, load_step_hlo
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.judge.compare import compare

DATA = Path(__file__).parents[2] / "data"
TYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
PREFIXES = sorted(TYPES)


def call(target: str, results: list[tuple[type, tuple[int, ...]]], *operands: np.ndarray,
         config: str = "{}") -> tuple[np.ndarray, ...]:
    """Evaluate custom-call `target` with a tuple of results (dtype, dims)."""
    shape = Shape("tuple", tuple_shapes=tuple(
        Shape(element_type(np.dtype(t)), dims) for t, dims in results))
    return run("custom-call", shape, *operands, custom_call_target=target,
               backend_config=config)


def call_one(target: str, result: tuple[type, tuple[int, ...]], *operands: np.ndarray,
             config: str = "{}") -> np.ndarray:
    t, dims = result
    return run("custom-call", Shape(element_type(np.dtype(t)), dims), *operands,
               custom_call_target=target, backend_config=config)


def matrices(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(n: int, dtype: type, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = matrices((*batch, n, n), dtype)
    return (a @ adjoint(a) + n * np.eye(n)).astype(dtype)


def adjoint(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def close(actual: np.ndarray, expected: np.ndarray, dtype: type, factor: float = 100) -> None:
    eps = np.finfo(dtype).eps
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(actual - expected)) <= factor * eps * scale, (actual, expected)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_getrf_factors_with_one_based_pivots(prefix: str) -> None:
    t = TYPES[prefix]
    a = matrices((2, 4, 4), t)
    lu, pivots, info = call(f"lapack_{prefix}getrf_ffi",
                            [(t, (2, 4, 4)), (np.int32, (2, 4)), (np.int32, (2,))], a)
    assert pivots.dtype == np.int32 and info.tolist() == [0, 0]
    assert pivots.min() >= 1 and pivots.max() <= 4
    for k in range(2):
        lower = np.tril(lu[k], -1) + np.eye(4, dtype=t)
        permuted = a[k].copy()
        for row, pivot in enumerate(pivots[k] - 1):  # LAPACK's row interchanges, in order
            permuted[[row, pivot]] = permuted[[pivot, row]]
        close(lower @ np.triu(lu[k]), permuted, t)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_getrf_reports_a_singular_matrix_in_info(prefix: str) -> None:
    t = TYPES[prefix]
    a = np.array([[1, 2, 3], [2, 4, 6], [0, 0, 0]], t)
    _, _, info = call(f"lapack_{prefix}getrf_ffi", [(t, (3, 3)), (np.int32, (3,)),
                                                    (np.int32, ())], a)
    assert int(info) > 0  # U(info, info) is exactly zero


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("trans", ["N", "T", "C"])
@pytest.mark.parametrize("diag", ["N", "U"])
def test_trsm_solves_every_option(prefix: str, side: str, uplo: str, trans: str,
                                  diag: str) -> None:
    t = TYPES[prefix]
    a = matrices((2, 3, 3), t) + 3 * np.eye(3, dtype=t)
    b = matrices((2, 3, 2) if side == "L" else (2, 2, 3), t, 1)
    config = (f"{{diag = {ord(diag)} : ui8, side = {ord(side)} : ui8, "
              f"trans_x = {ord(trans)} : ui8, uplo = {ord(uplo)} : ui8}}")
    x = call_one(f"lapack_{prefix}trsm_ffi", (t, b.shape), a, b, config=config)
    triangle = np.tril(a) if uplo == "L" else np.triu(a)
    if diag == "U":
        triangle = np.where(np.eye(3, dtype=bool), np.ones((), t), triangle)
    op = {"N": triangle, "T": np.swapaxes(triangle, -1, -2), "C": adjoint(triangle)}[trans]
    close(op @ x if side == "L" else x @ op, b, t, 1000)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_geqrf_then_orgqr_rebuild_the_matrix(prefix: str) -> None:
    t = TYPES[prefix]
    a = matrices((2, 5, 3), t)
    qr, tau = call(f"lapack_{prefix}geqrf_ffi", [(t, (2, 5, 3)), (t, (2, 3))], a)
    q = call_one(f"lapack_{prefix}{'ungqr' if prefix in 'cz' else 'orgqr'}_ffi",
                 (t, (2, 5, 3)), qr, tau)
    close(q @ np.triu(qr[:, :3]), a, t)
    close(adjoint(q) @ q, np.broadcast_to(np.eye(3, dtype=t), (2, 3, 3)), t)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_geqp3_pivots_columns(prefix: str) -> None:
    t = TYPES[prefix]
    a = matrices((4, 3), t) * np.array([1, 100, 10], t)  # the big column goes first
    qr, pivots, tau = call(f"lapack_{prefix}geqp3_ffi",
                           [(t, (4, 3)), (np.int32, (3,)), (t, (3,))],
                           a, np.zeros(3, np.int32))
    assert pivots.tolist()[0] == 2 and sorted(pivots.tolist()) == [1, 2, 3]
    q = call_one(f"lapack_{prefix}{'ungqr' if prefix in 'cz' else 'orgqr'}_ffi",
                 (t, (4, 3)), qr, tau)
    close(q @ np.triu(qr[:3]), a[:, pivots - 1], t, 1000)


def test_geqp3_with_preset_pivots_is_unsupported() -> None:
    a = matrices((3, 3), np.float64)
    with pytest.raises(Unsupported, match="preset pivots"):
        call("lapack_dgeqp3_ffi", [(np.float64, (3, 3)), (np.int32, (3,)), (np.float64, (3,))],
             a, np.array([1, 0, 0], np.int32))


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_multiplies_by_q(prefix: str, left: bool, transpose: bool) -> None:
    t = TYPES[prefix]
    a = matrices((4, 3), t)
    c = matrices((4, 2) if left else (2, 4), t, 1)
    qr, tau = call(f"lapack_{prefix}geqrf_ffi", [(t, (4, 3)), (t, (3,))], a)
    square = np.concatenate([qr, np.zeros((4, 1), t)], axis=1)
    q = call_one(f"lapack_{prefix}{'ungqr' if prefix in 'cz' else 'orgqr'}_ffi",
                 (t, (4, 4)), square, np.concatenate([tau, np.zeros(1, t)]))
    config = f"{{left = {str(left).lower()}, transpose = {str(transpose).lower()}}}"
    name = "unmqr" if prefix in "cz" else "ormqr"
    product = call_one(f"lapack_{prefix}{name}_ffi", (t, c.shape), qr, tau, c, config=config)
    op = adjoint(q) if transpose else q
    close(product, op @ c if left else c @ op, t)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_potrf_factors_and_reports_indefinite(prefix: str, uplo: str) -> None:
    t = TYPES[prefix]
    a = np.stack([hermitian(3, t), np.array([[1, 2, 0], [2, 1, 0], [0, 0, 1]], t)])
    factor, info = call(f"lapack_{prefix}potrf_ffi", [(t, (2, 3, 3)), (np.int32, (2,))], a,
                        config=f"{{uplo = {ord(uplo)} : ui8}}")
    assert info[0] == 0 and info[1] == 2  # the second leading minor is not positive
    lower = np.tril(factor[0]) if uplo == "L" else adjoint(np.triu(factor[0]))
    close(lower @ adjoint(lower), a[0], t)
    other = np.triu(a[0], 1) if uplo == "L" else np.tril(a[0], -1)  # left as it was
    np.testing.assert_array_equal(np.triu(factor[0], 1) if uplo == "L"
                                  else np.tril(factor[0], -1), other)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("routine", ["gesdd", "gesvd"])
def test_svd_modes(prefix: str, routine: str) -> None:
    t = TYPES[prefix]
    r = np.float32 if prefix in "sc" else np.float64
    a = matrices((2, 5, 3), t)
    target = f"lapack_{prefix}{routine}_ffi"
    shapes = {"A": ((2, 5, 5), (2, 3, 3)), "S": ((2, 5, 3), (2, 3, 3)),
              "N": ((2, 5, 5), (2, 3, 3))}
    singular = {}
    for mode, (u_dims, vt_dims) in shapes.items():
        _, s, u, vt, info = call(target, [(t, (2, 5, 3)), (r, (2, 3)), (t, u_dims),
                                          (t, vt_dims), (np.int32, (2,))],
                                 a, config=f"{{mode = {ord(mode)} : ui8}}")
        assert info.tolist() == [0, 0] and s.dtype == r
        singular[mode] = s
        if mode == "N":
            assert not u.any() and not vt.any()  # not written by LAPACK
        else:
            close((u[..., :3] * s[:, None, :]) @ vt, a, t)
    np.testing.assert_allclose(singular["N"], singular["A"], rtol=10 * np.finfo(r).eps)
    with pytest.raises(Unsupported, match="mode O"):
        call(target, [(t, (5, 3)), (r, (3,)), (t, (5, 3)), (t, (3, 3)), (np.int32, ())],
             a[0], config=f"{{mode = {ord('O')} : ui8}}")


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_syevd_heevd_reads_one_triangle(prefix: str, uplo: str) -> None:
    t = TYPES[prefix]
    r = np.float32 if prefix in "sc" else np.float64
    a = hermitian(4, t, (2,))
    ones = np.ones((4, 4), bool)
    unread = np.triu(ones, 1) if uplo == "L" else np.tril(ones, -1)
    garbage = np.where(unread, np.array(1e6, t), a)  # the other triangle is not read
    name = "heevd" if prefix in "cz" else "syevd"
    v, w, info = call(f"lapack_{prefix}{name}_ffi",
                      [(t, (2, 4, 4)), (r, (2, 4)), (np.int32, (2,))], garbage,
                      config=f"{{mode = {ord('V')} : ui8, uplo = {ord(uplo)} : ui8}}")
    assert info.tolist() == [0, 0] and np.all(np.diff(w) >= 0)  # ascending
    close(a @ v, v * w[:, None, :], t, 1000)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_geev_eigenvectors_left_and_right(prefix: str) -> None:
    t = TYPES[prefix]
    c = np.complex64 if prefix in "sc" else np.complex128
    rotation = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 2]], t)  # eigenvalues +-i and 2
    a = np.stack([rotation, matrices((3, 3), t)])
    values = [(t, (2, 3))] * (1 if prefix in "cz" else 2)
    config = f"{{compute_left = {ord('V')} : ui8, compute_right = {ord('V')} : ui8}}"
    *w, vl, vr, info = call(f"lapack_{prefix}geev_ffi",
                            [*values, (c, (2, 3, 3)), (c, (2, 3, 3)), (np.int32, (2,))],
                            a, config=config)
    assert info.tolist() == [0, 0]
    w = w[0] if len(w) == 1 else w[0] + 1j * w[1]
    np.testing.assert_allclose(sorted(np.round(w[0], 5), key=lambda z: (z.real, z.imag)),
                               [-1j, 1j, 2], atol=1e-5)
    close(a.astype(c) @ vr, vr * w[:, None, :], c, 1000)
    close(adjoint(vl) @ a.astype(c), adjoint(vl) * w[:, :, None], c, 1000)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_geev_of_a_non_finite_matrix_is_info_minus_4_and_nan(prefix: str) -> None:
    t = TYPES[prefix]
    c = np.complex64 if prefix in "sc" else np.complex128
    a = np.array([[1, np.nan], [0, 1]], t)
    values = [(t, (2,))] * (1 if prefix in "cz" else 2)
    config = f"{{compute_left = {ord('N')} : ui8, compute_right = {ord('V')} : ui8}}"
    *w, _, vr, info = call(f"lapack_{prefix}geev_ffi",
                           [*values, (c, (2, 2)), (c, (2, 2)), (np.int32, ())], a,
                           config=config)
    assert int(info) == -4 and np.isnan(vr).all() and all(np.isnan(x).all() for x in w)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("mode", ["V", "N"])
def test_gees_schur_form(prefix: str, mode: str) -> None:
    t = TYPES[prefix]
    a = matrices((2, 4, 4), t)
    values = [(t, (2, 4))] * (1 if prefix in "cz" else 2)
    t_form, vectors, *_, selected, info = call(
        f"lapack_{prefix}gees_ffi",
        [(t, (2, 4, 4)), (t, (2, 4, 4)), *values, (np.int32, (2,)), (np.int32, (2,))], a,
        config=f"{{mode = {ord(mode)} : ui8, sort = {ord('N')} : ui8}}")
    assert info.tolist() == [0, 0] and selected.tolist() == [0, 0]
    assert not np.tril(t_form, -2).any()  # quasi upper triangular
    if mode == "V":
        close(vectors @ t_form @ adjoint(vectors), a, t, 1000)
    else:
        assert not vectors.any()


def _eigenvalues(x: np.ndarray) -> np.ndarray:
    values = np.linalg.eigvals(x.astype(np.complex128))
    return np.array(sorted(values, key=lambda z: (round(z.real, 3), round(z.imag, 3))))


@pytest.mark.parametrize("prefix", PREFIXES)
def test_gehrd_keeps_the_eigenvalues(prefix: str) -> None:
    t = TYPES[prefix]
    a = matrices((4, 4), t)
    h, _, info = call(f"lapack_{prefix}gehrd_ffi", [(t, (4, 4)), (t, (3,)), (np.int32, ())],
                      a, config="{high = 4 : i32, low = 1 : i32}")
    assert int(info) == 0
    hessenberg = np.triu(h, -1)  # below the subdiagonal: Householder vectors
    np.testing.assert_allclose(_eigenvalues(hessenberg), _eigenvalues(a),
                               atol=1e3 * np.finfo(t).eps * 10)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_sytrd_hetrd_keeps_the_eigenvalues(prefix: str, uplo: str) -> None:
    t = TYPES[prefix]
    r = np.float32 if prefix in "sc" else np.float64
    a = hermitian(4, t)
    name = "hetrd" if prefix in "cz" else "sytrd"
    _, d, e, _, info = call(f"lapack_{prefix}{name}_ffi",
                            [(t, (4, 4)), (r, (4,)), (r, (3,)), (t, (3,)), (np.int32, ())],
                            a, config=f"{{uplo = {ord(uplo)} : ui8}}")
    assert int(info) == 0
    tridiagonal = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(tridiagonal.astype(np.float64)),
                               np.linalg.eigvalsh(a.astype(np.complex128)),
                               rtol=1e3 * np.finfo(r).eps)


def _tridiagonal(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_gtsv_solves_and_reports_singular(prefix: str) -> None:
    t = TYPES[prefix]
    dl, d, du = (matrices((2, 5), t, s) for s in range(3))
    d = d + 4
    d[1] = [1, 1, 1, 1, 1]
    dl[1], du[1] = [0, 1, 1, 1, 1], [1, 1, 1, 1, 0]  # rows 1 and 2 equal: singular
    b = matrices((2, 5, 2), t, 3)
    *_, x, info = call(f"lapack_{prefix}gtsv_ffi", [(t, (2, 5))] * 3 + [(t, (2, 5, 2)),
                                                                        (np.int32, (2,))],
                       dl, d, du, b)
    assert int(info[0]) == 0 and int(info[1]) > 0
    close(_tridiagonal(dl[0], d[0], du[0]) @ x[0], b[0], t, 1000)


def test_gtsv_of_one_row() -> None:
    one = np.ones(1, np.float64)
    *_, x, info = call("lapack_dgtsv_ffi", [(np.float64, (1,))] * 3 + [(np.float64, (1, 2)),
                                                                        (np.int32, ())],
                       one, 2 * one, one, np.array([[4.0, 6.0]]))
    assert int(info) == 0 and x.tolist() == [[2.0, 3.0]]


@pytest.mark.parametrize("t", [np.float32, np.float64, np.complex64, np.complex128])
def test_tridiagonal_solve_perturbed(t: type) -> None:
    dl, d, du = (matrices((2, 5), t, s) for s in range(3))
    d = d + 4
    b = matrices((2, 5, 2), t, 3)
    x = call_one("tridiagonal_solve_perturbed_ffi", (t, (2, 5, 2)), dl, d, du, b)
    for k in range(2):
        close(_tridiagonal(dl[k], d[k], du[k]) @ x[k], b[k], t, 1000)
    ones = np.ones(4, t)
    singular = call_one("tridiagonal_solve_perturbed_ffi", (t, (4, 1)), ones, ones, ones,
                        np.ones((4, 1), t))
    assert np.isfinite(singular).all()  # perturbed pivots, no inf or NaN


def test_unknown_lapack_routine_and_bad_layout_are_unsupported() -> None:
    a = matrices((3, 3), np.float64)
    with pytest.raises(Unsupported, match="custom-call lapack_dgesvj_ffi"):
        call_one("lapack_dgesvj_ffi", (np.float64, (3, 3)), a)
    shape = Shape("tuple", tuple_shapes=(Shape("f64", (3, 3), layout=(1, 0)),
                                         Shape("s32", (3,)), Shape("s32", ())))
    with pytest.raises(Unsupported, match="result layout"):
        run("custom-call", shape, a, custom_call_target="lapack_dgetrf_ffi",
            backend_config="{}")


def test_without_scipy_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("scipy", "scipy.linalg", "scipy.linalg.lapack"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    a = matrices((3, 3), np.float32)
    with pytest.raises(Unsupported) as raised:
        call("lapack_sgetrf_ffi", [(np.float32, (3, 3)), (np.int32, (3,)), (np.int32, ())], a)
    assert str(raised.value) == "unsupported: custom-call lapack_sgetrf_ffi (pip install scipy)"


def test_nan_input_propagates() -> None:
    a = np.array([[np.nan, 1], [1, 2]], np.float64)
    lu, _, _ = call("lapack_dgetrf_ffi", [(np.float64, (2, 2)), (np.int32, (2,)),
                                          (np.int32, ())], a)
    assert np.isnan(lu).any()


def _evaluations(folder: Path):
    for module in scan(folder).modules:
        for execution in module.executions:
            snapshot = load_snapshot(folder, execution)
            for step in module.ir_steps("hlo"):
                yield step, snapshot, evaluate_module(load_step_hlo(folder, step),
                                                      snapshot.arguments)


LINALG = sorted(p.name for p in (DATA / "linalg").iterdir())


# Programs whose outputs are unique only up to the sign or phase of each eigenvector,
# singular vector or Schur vector (and the Schur form's off-diagonal with them): another BLAS
# kernel under the same LAPACK may pick other phases (complex Schur vectors do, with
# OPENBLAS_CORETYPE=Prescott). Their magnitudes are unique.
UP_TO_PHASE = frozenset(("eig", "eigh", "schur", "svd", "svd_qr"))


def _leaves(value: object) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.asarray(value)]


@pytest.mark.parametrize("program", LINALG)
def test_real_jax_dumps_reproduce_the_recorded_result(program: str) -> None:
    """One module per program of benchmarks/devset/linalg (all four element types appear,
    batched and not), written by jax 0.10.2 on CPU: the evaluator's result is within the
    comparison's tolerance of what XLA recorded (magnitudes, where only they are unique). On
    the LAPACK build and CPU kernel that recorded them the results are bit-exact; on another,
    they may differ by rounding, and vectors by a phase."""
    results = list(_evaluations(DATA / "linalg" / program))
    assert results
    for step, snapshot, result in results:
        recorded, got = _leaves(snapshot.result), _leaves(result)
        if program in UP_TO_PHASE:
            recorded, got = [np.abs(x) for x in recorded], [np.abs(x) for x in got]
        assert compare(tuple(recorded), tuple(got)).ok, (program, step.label)


def test_every_routine_is_in_the_real_dumps() -> None:
    targets = set()
    for program in LINALG:
        for path in (DATA / "linalg" / program).glob("*.txt"):
            targets.update(part.split('"')[0] for part in
                           path.read_text().split('custom_call_target="')[1:])
    routines = {t[len("lapack_") + 1:-len("_ffi")] for t in targets if t.startswith("lapack_")}
    assert routines >= {"getrf", "trsm", "geqrf", "geqp3", "potrf", "gesdd", "gesvd", "geev",
                        "gees", "gehrd", "gtsv"}
    assert routines & {"orgqr", "ungqr"} and routines & {"ormqr", "unmqr"}
    assert routines & {"syevd", "heevd"} and routines & {"sytrd", "hetrd"}
    assert "tridiagonal_solve_perturbed_ffi" in targets
    assert {t[len("lapack_")] for t in targets if t.startswith("lapack_")} == set("sdcz")

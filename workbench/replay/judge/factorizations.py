"""A recorded factorization that is legal but not the reference's, judged by its relations.

Some factorizations are not unique. LAPACK's Schur form without sorting (`gees`) is unique
only up to the order of the eigenvalues on its diagonal and the phases of its Schur vectors;
an eigen-decomposition's (`geev`) vectors only up to order and phase; singular vectors
(`gesdd`, `gesvd`) up to phase, and a basis for a cluster of singular values; a Hermitian
eigen-decomposition's (`syevd`, `heevd`) vectors up to phase and a basis for a repeated
eigenvalue; a QR factorization (`geqrf`, Q from `orgqr`) up to the phases of R's rows and Q's
columns, and its Householder vectors with them. Another build of LAPACK, or the same one on
more threads, may legally return another one (JAX's `linalg_test` on XLA CPU: the same
eigenvalues of a clustered matrix in another order), and element by element that is far from
the reference, although it is right.

So where an output of the module is, directly, such a factorization's output (through
tuple/get-tuple-element/call/copy/reshape/transpose, and JAX's mask `select(info == 0, x,
NaN)`; R through jnp.triu of a leading block: `factorization_outputs`), the recorded outputs
are judged by what makes them a factorization of its matrix (an input of the execution, or
computed: its value in an evaluation of the module, `matrix_of`), with LAPACK's own tests'
rule: a residual is legal up to `THRESHOLD` times n eps |A| (eps of the factorization's type,
norms Frobenius):

- Schur: |A - Z T Z^H| (or, without Z, | |T| - |A| |), |Z^H Z - I| / (n eps), T upper
  triangular (real: quasi-triangular, 2x2 blocks apart), its eigenvalues (the diagonal, the
  2x2 blocks') equal to the reference's as a multiset;
- eig: the eigenvalues as a multiset, |A V - V diag(w)| / |V| and |V_l^H A - diag(w) V_l^H|
  / |V_l|, each vector of norm 1;
- SVD (`gesdd`, `gesvd`): |A - U S V^H|, U and V with orthonormal columns; the singular
  values, sorted, stay compared element by element.
- Hermitian eigen-decomposition: |A V - V W|, |V^H V - I|; the eigenvalues, sorted, stay
  compared element by element;
- QR: |A - Q R|, |Q^H Q - I|, R upper triangular (`_judge_qr` for Q or R alone).

Eigenvalues of a cluster are ill-conditioned: each is legal within LAPACK's error bound of an
eigenvalue, the same residual over its condition (`_eigenvalue_check`), and (for matrices of
at most `BACKWARD_ERROR_SIZE`) is an eigenvalue of a matrix that near A
(`_backward_error_check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.hlo_ir import Instruction, LiteralValue
from workbench.replay.judge.factorization_outputs import (
    NAMES,
    Factorization,
    matrix_of,
    output_of,
)

THRESHOLD = 30.0  # LAPACK's test suites' threshold on a residual / (n eps |A|)


@dataclass
class Relations:
    """The verdict on the recorded outputs at `paths` judged by their relations."""

    legal: bool
    paths: list[tuple[int, ...]]
    text: str


def _eigenvalues_of_schur(t: np.ndarray) -> np.ndarray:
    """The eigenvalues of a (quasi-)triangular matrix: its diagonal, its 2x2 blocks'."""
    n = t.shape[-1]
    values: list[complex] = []
    j = 0
    while j < n:
        if j + 1 < n and t[j + 1, j] != 0:
            values.extend(np.linalg.eigvals(t[j:j + 2, j:j + 2]))
            j += 2
        else:
            values.append(complex(t[j, j]))
            j += 1
    return np.array(values, np.complex128)


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices pairing the values of `a` with those of `b`, the sum of distances least."""
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    return rows, columns


def _multiset_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between paired values (`_pairs`)."""
    rows, columns = _pairs(a, b)
    return float(np.abs(a[rows] - b[columns]).max(initial=0.0))


def _eigenvalue_check(a: np.ndarray, theirs: list[np.ndarray], ours: list[np.ndarray],
                      scale: np.ndarray) -> _Check:
    """The recorded eigenvalues against the reference's as multisets, each pair within
    LAPACK's error bound of an eigenvalue, `THRESHOLD` n eps |A| / s, s = |y^H x| (unit
    left and right vectors) of A's nearest eigenvalue: a cluster's are ill-conditioned."""
    from scipy.linalg import eig

    worst = _Check("eigenvalues (as a multiset) off the reference's", 0.0, 0.0)
    ratio = -1.0
    for matrix, recorded, reference, size in zip(a, theirs, ours, scale, strict=True):
        exact, left, right = eig(matrix, left=True, right=True)
        cosines = np.abs(np.sum(np.conj(left) * right, axis=0)) / (
            np.linalg.norm(left, axis=0) * np.linalg.norm(right, axis=0))
        nearest = np.abs(reference[:, None] - exact[None, :]).argmin(axis=1)
        limits = THRESHOLD * size / np.maximum(cosines[nearest], 1e-300)
        rows, columns = _pairs(recorded, reference)
        distances = np.abs(recorded[rows] - reference[columns])
        ratios = distances / limits[columns]
        at = int(ratios.argmax())
        if ratios[at] > ratio:
            ratio = float(ratios[at])
            worst = _Check(worst.name, float(distances[at]), float(limits[columns][at]))
    return worst


BACKWARD_ERROR_SIZE = 128  # the largest n whose eigenvalues' backward errors are checked


def _backward_error_check(a: np.ndarray, theirs: list[np.ndarray], limit: float
                          ) -> _Check | None:
    """Each recorded eigenvalue mu is an eigenvalue of a matrix within `limit` of A: the
    least singular value of A - mu I (its backward error) is at most `limit`. One SVD per
    eigenvalue, so only up to `BACKWARD_ERROR_SIZE` (None beyond)."""
    n = a.shape[-1]
    if n > BACKWARD_ERROR_SIZE:
        return None
    identity = np.eye(n)
    worst = 0.0
    for matrix, values in zip(a, theirs, strict=True):
        shifted = matrix[None] - values[:, None, None] * identity
        worst = max(worst, float(np.linalg.svd(shifted, compute_uv=False)[:, -1].max()))
    return _Check("eigenvalues' backward error", worst, limit)


@dataclass
class _Check:
    name: str
    value: float
    limit: float

    @property
    def ok(self) -> bool:
        return bool(self.value <= self.limit)

    def __str__(self) -> str:
        relation = "<=" if self.ok else ">"
        return f"{self.name} {self.value:.3g} {relation} {self.limit:.3g}"


def _judge_svd(factorization: Factorization, arguments: list[LiteralValue],
               recorded: LiteralValue) -> Relations | None:
    """Singular vectors, unique only up to phase (and a basis within a cluster of singular
    values): |A - U S V^H| <= 30 max(m, n) eps |A|, |U^H U - I| and |V^H V - I| <= 30
    max(m, n) eps. The singular values, sorted and unique, stay compared element by
    element (the vectors are judged with the recorded ones)."""
    s, u, vt = (output_of(factorization, recorded, key) for key in ("s", "u", "vt"))
    if s is None or u is None or vt is None:
        return None
    a = matrix_of(factorization, arguments)
    element = a.dtype
    eps = float(np.finfo(element).eps)
    m, n = a.shape[-2:]
    k = min(m, n)
    wide = np.complex128 if factorization.complex_ else np.float64
    a = a.astype(wide).reshape(-1, m, n)
    u = u.astype(wide).reshape(-1, m, u.shape[-1])[..., :k]
    vt = vt.astype(wide).reshape(-1, vt.shape[-2], n)[..., :k, :]
    s = s.astype(np.float64).reshape(-1, k)
    size = max(m, n)
    limit = THRESHOLD * size * eps * float(np.linalg.norm(a, axis=(-2, -1)).max())

    def frobenius(x: np.ndarray) -> float:
        return float(np.linalg.norm(x, axis=(-2, -1)).max())

    identity = np.eye(k)
    checks = [
        _Check("|A - U S V^H|", frobenius(a - (u * s[:, None, :]) @ vt), limit),
        _Check("|U^H U - I|", frobenius(np.conj(np.swapaxes(u, -1, -2)) @ u - identity),
               THRESHOLD * size * eps),
        _Check("|V^H V - I|", frobenius(vt @ np.conj(np.swapaxes(vt, -1, -2)) - identity),
               THRESHOLD * size * eps)]
    legal = all(check.ok for check in checks)
    paths = [factorization.outputs[key][0] for key in ("u", "vt")]
    where = _where(paths)
    name = NAMES[factorization.routine]
    verdict = (f"a different, legal {name}: A = U S V^H within" if legal
               else f"not a legal {name} either:")
    return Relations(legal, paths, f"{where} judged by the {name}'s relations "
                                   f"({factorization.call.name}, {element} {m}x{n}), "
                                   f"{verdict} " + ", ".join(str(c) for c in checks))


def _frobenius(x: np.ndarray) -> float:
    """The largest Frobenius norm among a batch of matrices."""
    return float(np.linalg.norm(x, axis=(-2, -1)).max(initial=0.0))


def _hermitian_part(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix a `syevd`/`heevd` reads from `a`: its lower (or upper) triangle
    and the triangle's conjugate transpose (a real diagonal)."""
    kept = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    diagonal = np.real(np.diagonal(kept, 0, -2, -1))
    whole = strict + np.conj(np.swapaxes(strict, -1, -2))
    return whole + diagonal[..., None] * np.eye(a.shape[-1])


def _reads_lower(call: Instruction) -> bool:
    """Whether a Hermitian eigen-decomposition reads the lower triangle: LAPACK's `uplo`,
    cuSOLVER's `lower`."""
    from workbench.replay.hlo.lapack import parse_backend_config

    config = parse_backend_config(call.backend_config)
    if "uplo" in config:
        return chr(int(config["uplo"])) == "L"
    return bool(config.get("lower", False))


def _where(paths: list[tuple[int, ...]]) -> str:
    """The outputs at `paths` as a verdict names them ({0}, {1}), or "the result" when the
    result is not a tuple."""
    return ", ".join("".join(f"{{{i}}}" for i in p) for p in paths if p) or "the result"


def _relations_text(factorization: Factorization, paths: list[tuple[int, ...]], size: str,
                    element: Any, relation: str, checks: list[_Check]) -> Relations:
    """The verdict on the outputs at `paths`: legal when every check holds."""
    legal = all(check.ok for check in checks)
    where = _where(paths)
    name = NAMES[factorization.routine]
    verdict = (f"a different, legal {name}: {relation} within" if legal
               else f"not a legal {name} either:")
    return Relations(legal, paths, f"{where} judged by the {name}'s relations "
                                   f"({factorization.call.name}, {element} {size}), "
                                   f"{verdict} " + ", ".join(str(c) for c in checks))


def _judge_hermitian(factorization: Factorization, arguments: list[LiteralValue],
                     reference: LiteralValue, recorded: LiteralValue) -> Relations | None:
    """A Hermitian eigen-decomposition's vectors (`syevd`, `heevd`), unique only up to sign
    or phase, and within a repeated eigenvalue up to a rotation of its subspace, by LAPACK's
    test (xSYT21): |A V - V W| <= 30 n eps |A| and |V^H V - I| <= 30 n eps, with the
    recorded eigenvalues W (the reference's when they are not an output). The eigenvalues,
    sorted and unique, stay compared element by element."""
    v = output_of(factorization, recorded, "v")
    w = output_of(factorization, recorded, "w")
    if w is None:
        w = output_of(factorization, reference, "w")
    if v is None or w is None:
        return None
    a = matrix_of(factorization, arguments)
    element = a.dtype
    eps = float(np.finfo(element).eps)
    n = a.shape[-1]
    wide = np.complex128 if factorization.complex_ else np.float64
    a = _hermitian_part(a.astype(wide).reshape(-1, n, n), _reads_lower(factorization.call))
    v = v.astype(wide).reshape(-1, n, n)
    w = w.astype(np.float64).reshape(-1, n)
    limit = THRESHOLD * n * eps * _frobenius(a)
    checks = [_Check("|A V - V W|", _frobenius(a @ v - v * w[:, None, :]), limit),
              _Check("|V^H V - I|", _frobenius(np.conj(np.swapaxes(v, -1, -2)) @ v - np.eye(n)),
                     THRESHOLD * n * eps)]
    return _relations_text(factorization, [factorization.outputs["v"][0]], f"{n}x{n}",
                           element, "A V = V W", checks)


def _householder_q(packed: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Q (m x k) of LAPACK's Householder form (`geqrf`'s packed output, `tau` of k), for a
    batch, in the batch's type (LAPACK's orgqr / ungqr)."""
    from scipy.linalg import lapack

    k = tau.shape[-1]
    complex_ = np.iscomplexobj(packed)
    routine = lapack.zungqr if complex_ else lapack.dorgqr
    results = []
    for matrix, taus in zip(packed, tau, strict=True):
        q, _, info = routine(np.asfortranarray(matrix[:, :k]), taus)
        if info != 0:
            raise ValueError(f"orgqr of the recorded Householder form: info {info}")
        results.append(q)
    return np.asarray(results)


def _judge_qr(factorization: Factorization, arguments: list[LiteralValue],
              recorded: LiteralValue) -> Relations | None:
    """A QR factorization (`geqrf`, and Q from `orgqr`), unique only up to the signs
    (phases) of R's rows and Q's columns (and Q's columns beyond A's rank), by LAPACK's
    test (xQRT01): |A - Q R| <= 30 m eps |A|, |Q^H Q - I| <= 30 m eps, R upper triangular.
    Q and R as the program returns them, or made from the Householder form itself (packed
    and tau) where that is returned; Q alone: |A - Q Q^H A| for A within Q's span; R alone
    (jnp's mode "r"): |R^H R - A^H A| <= 2 x 30 m eps |A|^2."""
    q = output_of(factorization, recorded, "q")
    r = output_of(factorization, recorded, "r")
    packed = output_of(factorization, recorded, "a")
    tau = output_of(factorization, recorded, "tau")
    a = matrix_of(factorization, arguments)
    element = a.dtype
    eps = float(np.finfo(element).eps)
    m, n = a.shape[-2:]
    wide = np.complex128 if factorization.complex_ else np.float64
    a = a.astype(wide).reshape(-1, m, n)
    if packed is not None:
        packed = packed.astype(wide).reshape(-1, m, n)
        if q is None and tau is not None:
            q = _householder_q(packed, tau.astype(wide).reshape(len(packed), -1))
        if r is None:
            r = np.triu(packed[:, :min(m, n), :])
    if q is None and r is None:
        return None
    limit = THRESHOLD * m * eps * _frobenius(a)
    checks: list[_Check] = []
    if q is not None:
        q = q.astype(wide).reshape(-1, m, q.shape[-1])
        qh = np.conj(np.swapaxes(q, -1, -2))
        if r is not None:
            r = r.astype(wide).reshape(-1, r.shape[-2], n)
            checks.append(_Check("|A - Q R|", _frobenius(a - q @ r), limit))
        else:
            checks.append(_Check("|A - Q Q^H A|", _frobenius(a - q @ (qh @ a)), limit))
        checks.append(_Check("|Q^H Q - I|", _frobenius(qh @ q - np.eye(q.shape[-1])),
                             THRESHOLD * m * eps))
    if r is not None:
        r = r.astype(wide).reshape(-1, r.shape[-2], n)
        if q is None:
            rh, ah = np.conj(np.swapaxes(r, -1, -2)), np.conj(np.swapaxes(a, -1, -2))
            checks.append(_Check("|R^H R - A^H A|", _frobenius(rh @ r - ah @ a),
                                 2 * limit * _frobenius(a)))
        checks.append(_Check("|R below its diagonal|",
                             float(np.abs(np.tril(r, -1)).max(initial=0.0)), limit))
    paths = [factorization.outputs[key][0] for key in ("q", "r", "a", "tau")
             if key in factorization.outputs]
    return _relations_text(factorization, paths, f"{m}x{n}", element, "A = Q R", checks)


def judge_relations(factorization: Factorization, arguments: list[LiteralValue],
                    reference: LiteralValue, recorded: LiteralValue) -> Relations | None:
    """The recorded outputs of `factorization` judged by its relations (None: too few of
    its outputs are outputs of the module to judge them this way)."""
    outputs = factorization.outputs
    if factorization.routine in ("gesdd", "gesvd"):
        return _judge_svd(factorization, arguments, recorded)
    if factorization.routine == "syevd":
        return _judge_hermitian(factorization, arguments, reference, recorded)
    if factorization.routine == "geqrf":
        return _judge_qr(factorization, arguments, recorded)

    def output(value: Any, key: str) -> np.ndarray | None:
        return output_of(factorization, value, key)

    def values(value: Any) -> np.ndarray | None:
        if "values" in outputs:
            return output(value, "values")
        if "wr" in outputs and "wi" in outputs:
            wr, wi = output(value, "wr"), output(value, "wi")
            assert wr is not None and wi is not None
            return wr.astype(np.float64) + 1j * wi.astype(np.float64)
        return None

    routine = factorization.routine
    keys = ("t", "z", "wr", "wi", "values") if routine == "gees" else ("values", "vl", "vr")
    used = [k for k in keys if k in outputs]
    if routine == "gees" and "t" not in used:
        return None
    if routine == "geev" and values(recorded) is None:
        return None
    a = matrix_of(factorization, arguments)
    wide = np.complex128 if factorization.complex_ or routine == "geev" else np.float64
    element = a.dtype
    eps = float(np.finfo(element).eps)
    n = a.shape[-1]
    a = a.astype(wide).reshape(-1, n, n)

    def batch(array: np.ndarray | None, vector: bool = False) -> np.ndarray | None:
        if array is None:
            return None
        return array.astype(wide).reshape((-1, n) if vector else (-1, n, n))

    checks: list[_Check] = []
    norms = np.linalg.norm(a, axis=(-2, -1))
    scale = np.maximum(n * eps * norms, np.finfo(np.float64).tiny)
    limit = THRESHOLD * float(scale.max())
    if routine == "gees":
        t, z = batch(output(recorded, "t")), batch(output(recorded, "z"))
        reference_t = batch(output(reference, "t"))
        assert t is not None and reference_t is not None
        if z is not None:
            residual = a - z @ t @ np.conj(np.swapaxes(z, -1, -2))
            checks.append(_Check("|A - Z T Z^H|", float(np.linalg.norm(residual, axis=(-2, -1))
                                                          .max()), limit))
            gram = np.conj(np.swapaxes(z, -1, -2)) @ z - np.eye(n)
            checks.append(_Check("|Z^H Z - I|", float(np.linalg.norm(gram, axis=(-2, -1)).max()),
                                 THRESHOLD * n * eps))
        else:
            gap = np.abs(np.linalg.norm(t, axis=(-2, -1)) - norms)
            checks.append(_Check("| |T| - |A| |", float(gap.max()), limit))
        below = np.tril(t, -2 if not factorization.complex_ else -1)
        checks.append(_Check("|T below its (block) diagonal|",
                             float(np.abs(below).max(initial=0.0)), limit))
        if not factorization.complex_ and n > 2:
            sub = np.diagonal(t, -1, -2, -1)
            pairs = (sub[..., 1:] != 0) & (sub[..., :-1] != 0)
            checks.append(_Check("adjacent 2x2 blocks", float(pairs.sum()), 0.0))
        ours = [_eigenvalues_of_schur(m) for m in reference_t]
        theirs = [_eigenvalues_of_schur(m) for m in t]
        given = values(recorded)
        if given is not None:
            given = given.astype(np.complex128).reshape(-1, n)
            distance = max(_multiset_distance(g, e) for g, e in zip(given, theirs,
                                                                     strict=True))
            checks.append(_Check("eigenvalue outputs vs diagonal of T", distance, limit))
    else:
        w = values(recorded)
        reference_w = values(reference)
        assert w is not None and reference_w is not None
        w = w.astype(np.complex128).reshape(-1, n)
        ours = list(reference_w.astype(np.complex128).reshape(-1, n))
        theirs = list(w)
        for key, left in (("vr", False), ("vl", True)):
            v = batch(output(recorded, key))
            if v is None:
                continue
            vh = np.conj(np.swapaxes(v, -1, -2))
            residual = (vh @ a - w[:, :, None] * vh) if left else (a @ v - v * w[:, None, :])
            size = np.linalg.norm(v, axis=(-2, -1))
            ratio = np.linalg.norm(residual, axis=(-2, -1)) / np.maximum(size, 1e-300)
            name = "|V_l^H A - W V_l^H| / |V_l|" if left else "|A V - V W| / |V|"
            checks.append(_Check(name, float(ratio.max()), limit))
            lengths = np.abs(np.linalg.norm(v, axis=-2) - 1)
            checks.append(_Check(f"{'left' if left else 'right'} vectors' | |v| - 1 |",
                                 float(lengths.max()), THRESHOLD * n * eps))
    checks.append(_eigenvalue_check(a, theirs, ours, scale))
    backward = _backward_error_check(a, theirs, limit)
    if backward is not None:
        checks.append(backward)
    legal = all(check.ok for check in checks)
    paths = [outputs[k][0] for k in used]
    where = _where(paths)
    name = NAMES[routine]
    judged = f"{where} judged by the {name}'s relations"
    relation = "A = Z T Z^H" if routine == "gees" else "A V = V W"
    if routine == "geev" and not {"vl", "vr"} & set(used):
        judged, name, relation = (f"{where} judged as A's eigenvalues",
                                  "order of the eigenvalues", "the same multiset")
    verdict = (f"a different, legal {name}: {relation} within" if legal
               else f"not a legal {name} either:")
    return Relations(legal, paths, f"{judged} ({factorization.call.name}, {element} {n}x{n}), "
                                   f"{verdict} " + ", ".join(str(c) for c in checks))

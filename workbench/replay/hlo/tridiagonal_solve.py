"""jaxlib's `tridiagonal_solve_perturbed_ffi`: a tridiagonal solve that survives singular
matrices (`lax.linalg.tridiagonal_solve(..., perturb_singular=True)`).

Not LAPACK: jaxlib's own kernel, which follows LAPACK's xLAGTF/xLAGTS. Gaussian elimination
with partial (row) pivoting, the forward solve done while factoring; then back substitution
where a pivot smaller than one is nudged, by eps * max|U| doubled until it is large enough, or
the row scaled up, so that neither 1/pivot nor the row times it overflows. Each row of the
solution is `row * (1 / pivot)`, as the kernel computes it.

Operands: dl, d, du of shape [..., n] (dl[0] and du[n-1] unused) and b of shape [..., n, k];
the result has b's shape. Leading dimensions are batch dimensions.
"""

from __future__ import annotations

import numpy as np

from workbench.replay.errors import EvaluationError


def _perturb_pivot(perturb: np.floating, pivot: np.inexact, row: np.ndarray
                   ) -> tuple[np.inexact, np.ndarray]:
    """xLAGTS's guard for a small pivot: (pivot, row) such that row * (1 / pivot) does not
    overflow."""
    real = np.abs(pivot).dtype.type
    one = real(1)
    info = np.finfo(real)
    small = one / info.max
    safemin = info.tiny if small < info.tiny else small * (one + info.eps)
    bignum = one / safemin
    size = np.abs(pivot)
    if size >= one:
        return pivot, row
    perturb = real(np.copysign(max(np.abs(perturb), safemin), np.real(pivot)))
    largest = np.max(np.abs(row)) if row.size else real(0)
    while size < one:
        if size < safemin:
            if size == 0 or largest * safemin > size:
                pivot = pivot + perturb
                perturb = perturb * real(2)
            else:
                return pivot * bignum, row * bignum
        elif largest > size * bignum:
            pivot = pivot + perturb
            perturb = perturb * real(2)
        else:
            break
        size = np.abs(pivot)
    return pivot, row


def _solve_one(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = d.shape[0]
    x = np.zeros_like(b)
    if n == 0:
        return x
    eps = np.finfo(np.abs(d[:1]).dtype).eps
    one = d.dtype.type(1)
    if n == 1:
        pivot, row = _perturb_pivot(eps * np.abs(d[0]), d[0], b[0].copy())
        x[0] = row / pivot
        return x
    # u[:, 0..2]: the diagonal, superdiagonal and second superdiagonal of U
    u = np.zeros((n, 3), d.dtype)
    u[0, 0], u[0, 1] = d[0], du[0]
    max_u = max(np.abs(u[0, 0]), np.abs(u[0, 1]))
    scale1 = np.abs(u[0, 0]) + np.abs(u[0, 1])
    x[0] = b[0]
    for k in range(n - 1):
        u[k + 1, 0] = d[k + 1]
        scale2 = np.abs(dl[k + 1]) + np.abs(u[k + 1, 0])
        if k < n - 2:
            scale2 = scale2 + np.abs(du[k + 1])
        if dl[k + 1] == 0:
            scale1 = scale2
            u[k + 1, 1] = du[k + 1]
            u[k, 2] = 0
            x[k + 1] = b[k + 1]
        else:
            piv1 = 0 if u[k, 0] == 0 else np.abs(u[k, 0]) / scale1
            piv2 = np.abs(dl[k + 1]) / scale2
            if piv2 <= piv1:  # no row exchange
                scale1 = scale2
                factor = dl[k + 1] / u[k, 0]
                u[k + 1, 0] -= factor * u[k, 1]
                u[k + 1, 1] = du[k + 1]
                u[k, 2] = 0
                x[k + 1] = b[k + 1] - factor * x[k]
            else:  # exchange rows k and k + 1
                factor = u[k, 0] / dl[k + 1]
                u_k1 = u[k, 1]
                u[k, 0] = dl[k + 1]
                u[k + 1, 0] = u_k1 - factor * d[k + 1]
                u[k, 1] = d[k + 1]
                if k < n - 2:
                    u[k, 2] = du[k + 1]
                    u[k + 1, 1] = -factor * du[k + 1]
                x[k + 1] = x[k] - factor * b[k + 1]
                x[k] = b[k + 1]
                scale1 = np.abs(u[k + 1, 0]) + np.abs(u[k + 1, 1])
        if k < n - 2:
            max_u = max(max_u, *np.abs(u[k]))
    max_u = max(max_u, np.abs(u[n - 1, 0]))
    perturb = eps * max_u
    pivot, row = _perturb_pivot(perturb, u[n - 1, 0], x[n - 1].copy())
    x[n - 1] = row * (one / pivot)
    for k in range(n - 2, -1, -1):
        row = x[k] - u[k, 1] * x[k + 1]
        if k < n - 2:
            row = row - u[k, 2] * x[k + 2]
        pivot, row = _perturb_pivot(perturb, u[k, 0], row)
        x[k] = row * (one / pivot)
    return x


def tridiagonal_solve_perturbed(dl: np.ndarray, d: np.ndarray, du: np.ndarray,
                                b: np.ndarray) -> np.ndarray:
    if not (dl.shape == d.shape == du.shape and b.shape[:-1] == d.shape
            and b.dtype == d.dtype == dl.dtype == du.dtype):
        raise EvaluationError(
            f"tridiagonal_solve_perturbed_ffi of {[list(a.shape) for a in (dl, d, du, b)]}")
    out = np.zeros_like(b)
    for index in np.ndindex(*d.shape[:-1]):
        out[index] = _solve_one(dl[index], d[index], du[index], b[index])
    return out

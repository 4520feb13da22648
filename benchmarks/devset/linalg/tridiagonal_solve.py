"""lax.linalg.tridiagonal_solve: gtsv, and with perturb_singular the jaxlib kernel
tridiagonal_solve_perturbed_ffi. The second system is singular (gtsv's info > 0: NaNs)."""
import numpy as np
from _common import matrices, run_all
from jax import lax


def f(dl, d, du, b):
    return (lax.linalg.tridiagonal_solve(dl, d, du, b),
            lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True))


def system(t, batch=()):
    dl, d, du = (matrices((*batch, 5), t, s) for s in range(3))
    dl[..., 0] = 0
    du[..., -1] = 0
    return dl, d + 4, du, matrices((*batch, 5, 2), t, 3)


def singular(t):
    dl = np.array([0, 1, 1, 1], t)
    return dl, np.array([1, 1, 1, 1], t), np.array([1, 1, 1, 0], t), np.ones((4, 1), t)


run_all(f, system, lambda t: system(t, (2,)), singular)

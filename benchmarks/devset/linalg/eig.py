"""lax.linalg.eig (geev) with left and right eigenvectors, and eigenvalues alone."""
import jax.numpy as jnp
from _common import matrices, run_all
from jax import lax


def f(a):
    return lax.linalg.eig(a, compute_left_eigenvectors=True), jnp.linalg.eigvals(a)


run_all(f, lambda t: (matrices((4, 4), t),), lambda t: (matrices((2, 3, 3), t, 1),))

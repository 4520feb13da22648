"""jax.scipy.linalg.schur (gees) with Schur vectors, and the Schur form alone."""
from _common import matrices, run_all
from jax import lax


def f(a):
    return lax.linalg.schur(a), lax.linalg.schur(a, compute_schur_vectors=False)


run_all(f, lambda t: (matrices((4, 4), t),), lambda t: (matrices((2, 3, 3), t, 1),))

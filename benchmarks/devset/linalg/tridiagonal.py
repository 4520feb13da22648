"""lax.linalg.tridiagonal (sytrd / hetrd) from the lower and the upper triangle."""
from _common import hermitian, run_all
from jax import lax


def f(a):
    return lax.linalg.tridiagonal(a, lower=True), lax.linalg.tridiagonal(a, lower=False)


run_all(f, lambda t: (hermitian((4, 4), t),), lambda t: (hermitian((2, 3, 3), t, 1),))

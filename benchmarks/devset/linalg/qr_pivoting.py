"""lax.linalg.qr with column pivoting (geqp3)."""
from _common import matrices, run_all
from jax import lax


def f(a):
    return lax.linalg.qr(a, pivoting=True), lax.linalg.qr(a, pivoting=True, full_matrices=False)


run_all(f, lambda t: (matrices((5, 3), t),), lambda t: (matrices((2, 3, 4), t, 1),))

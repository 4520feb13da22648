"""jnp.linalg.qr (geqrf, then orgqr / ungqr for Q): reduced, complete and R only."""
import jax.numpy as jnp
from _common import matrices, run_all


def f(a):
    return jnp.linalg.qr(a), jnp.linalg.qr(a, mode="complete"), jnp.linalg.qr(a, mode="r")


run_all(f, lambda t: (matrices((5, 3), t),), lambda t: (matrices((2, 3, 4), t, 1),))

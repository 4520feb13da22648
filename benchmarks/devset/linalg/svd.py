"""jnp.linalg.svd (gesdd): full and reduced U/Vt, singular values alone; tall and wide."""
import jax.numpy as jnp
from _common import matrices, run_all


def f(a):
    return (jnp.linalg.svd(a, full_matrices=True), jnp.linalg.svd(a, full_matrices=False),
            jnp.linalg.svd(a, compute_uv=False))


run_all(f, lambda t: (matrices((5, 3), t),), lambda t: (matrices((2, 3, 4), t, 1),))

"""jnp.linalg.det and slogdet: getrf, then the product of U's diagonal with the pivots' sign.
The second input is singular (info > 0)."""
import jax.numpy as jnp
import numpy as np
from _common import matrices, run_all


def f(a):
    return jnp.linalg.det(a), jnp.linalg.slogdet(a)


run_all(f, lambda t: (matrices((2, 4, 4), t),),
        lambda t: (np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], t),))

"""jnp.linalg.inv: getrf and trsm against the identity."""
import jax.numpy as jnp
from _common import matrices, run_all

run_all(jnp.linalg.inv, lambda t: (matrices((4, 4), t),), lambda t: (matrices((3, 2, 2), t, 1),))

"""jnp.linalg.solve: LAPACK getrf (LU) then trsm (two triangular solves)."""
import jax.numpy as jnp
from _common import matrices, run_all

run_all(jnp.linalg.solve,
        lambda t: (matrices((4, 4), t), matrices((4, 2), t, 1)),
        lambda t: (matrices((2, 3, 3), t, 2), matrices((2, 3, 1), t, 3)))

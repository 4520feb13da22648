"""jnp.linalg.cholesky (potrf); the second input is not positive definite (info > 0)."""
import jax.numpy as jnp
import numpy as np
from _common import hermitian, run_all

run_all(jnp.linalg.cholesky, lambda t: (hermitian((4, 4), t),),
        lambda t: (hermitian((2, 3, 3), t, 1),),
        lambda t: (np.array([[1, 2], [2, 1]], t),))

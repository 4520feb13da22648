"""An eigen-decomposition of a symmetric matrix with a repeated eigenvalue (`jnp.linalg.eigh`,
LAPACK `ssyevd`) and a QR factorization (`jnp.linalg.qr`: `sgeqrf`, then `sorgqr` for Q; and
`mode="raw"`: the Householder form itself), f32 on XLA CPU."""
import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(7)
basis, _ = np.linalg.qr(rng.standard_normal((6, 6)))
symmetric = (basis * np.array([-2.0, 0.5, 1.0, 1.0, 3.0, 4.0])) @ basis.T
print(jax.jit(jnp.linalg.eigh)(symmetric.astype(np.float32)))

tall = rng.standard_normal((6, 4)).astype(np.float32)
print(jax.jit(jnp.linalg.qr)(tall))
print(jax.jit(lambda a: jnp.linalg.qr(a, mode="raw"))(tall))

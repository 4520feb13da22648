"""An eigen-decomposition of a symmetric matrix with a repeated eigenvalue (`jnp.linalg.eigh`,
LAPACK `ssyevd`) and a QR factorization (`jnp.linalg.qr`: `sgeqrf`, then `sorgqr` for Q; and
`mode="raw"`: the Householder form itself), f32 on XLA CPU; then both in c64 (`cheevd`,
`cgeqrf` and `cungqr`)."""
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

unitary, _ = np.linalg.qr(rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5)))
hermitian = (unitary * np.array([-1.0, 2.0, 1.0, 0.5, 3.0])) @ unitary.conj().T
print(jax.jit(jnp.linalg.eigh)(hermitian.astype(np.complex64)))
wide = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
print(jax.jit(jnp.linalg.qr)(wide))

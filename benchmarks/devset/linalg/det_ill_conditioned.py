"""jnp.linalg.det of a nearly singular 3x3 f32 matrix: cancellation turns last-bit
differences of the LU factors into a large relative difference of the determinant."""
import jax
import jax.numpy as jnp
import numpy as np

a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0001]], np.float32)
jax.block_until_ready(jax.jit(jnp.linalg.det)(a))

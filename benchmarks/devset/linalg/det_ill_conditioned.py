"""jnp.linalg.det of a nearly singular 3x3 f32 matrix. JAX computes a 3x3 determinant in
closed form (six triple products); XLA's CPU code contracts them into fused multiply-adds,
and the cancellation turns those last-bit differences into 0.84% of the result
(-0.0017929 recorded, -0.0018082 with every product rounded)."""
import jax
import jax.numpy as jnp
import numpy as np

a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0006]], np.float32)
jax.block_until_ready(jax.jit(jnp.linalg.det)(a))

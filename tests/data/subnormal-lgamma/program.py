"""lgamma of an f64 array holding the smallest subnormal (XLA CPU reads it as zero)."""

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

x = jnp.array([5e-324, 1.0, 2.5, 1e-300], jnp.float64)
print(jax.jit(jax.lax.lgamma)(x))

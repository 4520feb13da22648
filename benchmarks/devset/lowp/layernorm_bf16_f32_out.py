"""Mixed precision layer norm: bf16 arithmetic on a 128 x 256 activation, f32 output."""
import jax
import jax.numpy as jnp
import numpy as np


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta).astype(jnp.float32)


rng = np.random.default_rng(11)
x = (rng.standard_normal((128, 256)) * 3 + 1).astype(jnp.bfloat16)
gamma = (1 + 0.1 * rng.standard_normal(256)).astype(jnp.bfloat16)
beta = (0.1 * rng.standard_normal(256)).astype(jnp.bfloat16)
print(jax.jit(layer_norm)(x, gamma, beta).sum())

"""bf16 elementwise activations of a 128 x 256 array: exp, tanh, gelu (tanh and erf forms), silu."""
import jax
import jax.numpy as jnp
import numpy as np


def activations(x):
    return (
        jnp.exp(x),
        jnp.tanh(x),
        jax.nn.gelu(x, approximate=True),
        jax.nn.gelu(x, approximate=False),
        jax.nn.silu(x),
    )


rng = np.random.default_rng(7)
x = (rng.standard_normal((128, 256)) * 2).astype(jnp.bfloat16)
print([float(r.astype(jnp.float32).sum()) for r in jax.jit(activations)(x)])

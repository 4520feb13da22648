"""bf16 exp, tanh and gelu of a 128 x 256 array, each upcast to f32 inside the jitted function."""
import jax
import jax.numpy as jnp
import numpy as np


def activations(x):
    f32 = jnp.float32
    return (jnp.exp(x).astype(f32), jnp.tanh(x).astype(f32),
            jax.nn.gelu(x, approximate=True).astype(f32))


rng = np.random.default_rng(15)
x = (rng.standard_normal((128, 256)) * 2).astype(jnp.bfloat16)
print([float(r.sum()) for r in jax.jit(activations)(x)])

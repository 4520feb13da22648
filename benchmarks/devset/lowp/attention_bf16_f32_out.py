"""Mixed precision attention: bf16 softmax(Q K^T / sqrt(d)) V, 4 heads of 128 x 64, f32 output.

The output is upcast inside the jitted function, as a model returns f32 activations: an f32
result whose values went through bf16 arithmetic.
"""
import jax
import jax.numpy as jnp
import numpy as np


def attention(q, k, v):
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    out = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    return out.astype(jnp.float32)


rng = np.random.default_rng(10)
q, k, v = (rng.standard_normal((1, 4, 128, 64)).astype(jnp.bfloat16) for _ in range(3))
print(jax.jit(attention)(q, k, v).sum())

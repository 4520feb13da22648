"""bf16 multi-head attention: softmax(Q K^T / sqrt(d)) V, 4 heads of 128 tokens x 64."""
import jax
import jax.numpy as jnp
import numpy as np


def attention(q, k, v):
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((1, 4, 128, 64)).astype(jnp.bfloat16) for _ in range(3))
print(jax.jit(attention)(q, k, v).astype(jnp.float32).sum())

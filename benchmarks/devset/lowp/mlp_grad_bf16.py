"""Gradient (jax.grad) of a bf16 two-layer MLP's cross-entropy loss: 64 x 128 -> 256 -> 10."""
import jax
import jax.numpy as jnp
import numpy as np


def loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


rng = np.random.default_rng(2)
params = (
    (rng.standard_normal((128, 256)) / np.sqrt(128)).astype(jnp.bfloat16),
    np.zeros(256, jnp.bfloat16),
    (rng.standard_normal((256, 10)) / np.sqrt(256)).astype(jnp.bfloat16),
    np.zeros(10, jnp.bfloat16),
)
x = rng.standard_normal((64, 128)).astype(jnp.bfloat16)
labels = rng.integers(0, 10, 64).astype(np.int32)
grads = jax.jit(jax.grad(loss))(params, x, labels)
print([float(g.astype(jnp.float32).sum()) for g in grads])

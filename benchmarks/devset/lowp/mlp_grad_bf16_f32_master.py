"""Mixed precision training gradient: f32 master weights cast to bf16 for a two-layer MLP
(64 x 128 -> 256 -> 10), f32 cross-entropy loss, jax.grad gives f32 gradients computed in bf16."""
import jax
import jax.numpy as jnp
import numpy as np


def loss(params, x, labels):
    w1, b1, w2, b2 = (p.astype(jnp.bfloat16) for p in params)
    h = jax.nn.relu(x @ w1 + b1)
    logits = (h @ w2 + b2).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


rng = np.random.default_rng(12)
params = (
    (rng.standard_normal((128, 256)) / np.sqrt(128)).astype(np.float32),
    np.zeros(256, np.float32),
    (rng.standard_normal((256, 10)) / np.sqrt(256)).astype(np.float32),
    np.zeros(10, np.float32),
)
x = rng.standard_normal((64, 128)).astype(jnp.bfloat16)
labels = rng.integers(0, 10, 64).astype(np.int32)
grads = jax.jit(jax.grad(loss))(params, x, labels)
print([float(g.sum()) for g in grads])

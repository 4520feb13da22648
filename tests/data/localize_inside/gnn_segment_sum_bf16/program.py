"""A GNN message-passing step in bf16: messages summed per node with segment_sum, SGD."""
import jax, jax.numpy as jnp, numpy as np

rng = np.random.default_rng(3)
N, E, D = 128, 512, 8
senders = jnp.asarray(rng.integers(0, N, E), jnp.int32)
receivers = jnp.asarray(rng.integers(0, N, E), jnp.int32)
x = jnp.asarray(rng.standard_normal((N, D)), jnp.bfloat16)
w = jnp.asarray(rng.standard_normal((D, D)) / 3, jnp.float32)
y = jnp.asarray(rng.standard_normal((N, D)), jnp.float32)


def loss(w, x, y):
    messages = (x[senders] @ w.astype(jnp.bfloat16))
    h = jax.ops.segment_sum(messages, receivers, num_segments=N)
    h = jax.nn.relu(h).astype(jnp.float32)
    return jnp.mean((h.sum(axis=0) - y.sum(axis=0)) ** 2)


@jax.jit
def step(w, x, y):
    l, g = jax.value_and_grad(loss)(w, x, y)
    return w - 0.1 * g, l


print(step(w, x, y))

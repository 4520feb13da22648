"""A GRU sequence classifier under `lax.scan`: sigmoid gates, tanh candidate, the last state
through a dense layer; bf16 compute, RMSProp with centred second moments."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def loss(params, xs, labels):
    wx, wh, b, wout = (p.astype(bf) for p in params)
    hidden = wh.shape[0]

    def cell(h, x):
        gates = x @ wx + h @ wh + b
        z = jax.nn.sigmoid(gates[:, :hidden])
        r = jax.nn.sigmoid(gates[:, hidden:2 * hidden])
        n = jnp.tanh(x @ wx[:, 2 * hidden:] + (r * h) @ wh[:, 2 * hidden:])
        return (1 - z) * n + z * h, None

    h0 = jnp.zeros((xs.shape[1], hidden), bf)
    h, _ = jax.lax.scan(cell, h0, xs.astype(bf))
    logits = (h @ wout).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], -1))


optimizer = optax.rmsprop(1e-3, centered=True)


@jax.jit
def step(params, state, xs, labels):
    grads = jax.grad(loss)(params, xs, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state


rng = np.random.default_rng(15)
inputs, hidden = 16, 32
params = (
    (rng.standard_normal((inputs, 3 * hidden)) / np.sqrt(inputs)).astype(np.float32),
    (rng.standard_normal((hidden, 3 * hidden)) / np.sqrt(hidden)).astype(np.float32),
    np.zeros(3 * hidden, np.float32),
    (rng.standard_normal((hidden, 5)) / np.sqrt(hidden)).astype(np.float32),
)
xs = rng.standard_normal((12, 8, inputs)).astype(np.float32)
labels = rng.integers(0, 5, 8).astype(np.int32)
state = optimizer.init(params)
for _ in range(2):
    params, state = step(params, state, xs, labels)
print(float(params[3].sum()))

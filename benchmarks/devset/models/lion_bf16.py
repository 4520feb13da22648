"""A two-layer MLP's Lion steps: every update is lr * sign(interpolated momentum), so each
element's update rests on a sign; bf16 compute, f32 parameters, weight decay."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def loss(params, x, y):
    w1, b1, w2, b2 = (p.astype(bf) for p in params)
    h = jax.nn.gelu(x.astype(bf) @ w1 + b1)
    out = (h @ w2 + b2).astype(jnp.float32)
    return jnp.mean((out - y) ** 2)


optimizer = optax.lion(3e-4, weight_decay=0.01)


@jax.jit
def step(params, state, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(11)
params = (
    (rng.standard_normal((48, 96)) / np.sqrt(48)).astype(np.float32),
    np.zeros(96, np.float32),
    (rng.standard_normal((96, 16)) / np.sqrt(96)).astype(np.float32),
    np.zeros(16, np.float32),
)
x = rng.standard_normal((64, 48)).astype(np.float32)
y = rng.standard_normal((64, 16)).astype(np.float32)
state = optimizer.init(params)
for _ in range(2):
    params, state, value = step(params, state, x, y)
print(float(value))

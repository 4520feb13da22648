"""An MLP with dropout inside the jitted step (threefry bits, a Bernoulli mask, rescaling by
1 / keep), layer norm and AdamW; bf16 compute, f32 parameters, the PRNG key an argument."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def loss(params, x, y, key):
    w1, b1, w2, b2 = (p.astype(bf) for p in params)
    h = jax.nn.relu(x.astype(bf) @ w1 + b1)
    keep = jax.random.bernoulli(key, 0.8, h.shape)
    h = jnp.where(keep, h / jnp.asarray(0.8, bf), jnp.zeros_like(h))
    h32 = h.astype(jnp.float32)
    h = ((h32 - h32.mean(-1, keepdims=True)) / (h32.std(-1, keepdims=True) + 1e-5)).astype(bf)
    out = (h @ w2 + b2).astype(jnp.float32)
    return optax.sigmoid_binary_cross_entropy(out, y).mean()


optimizer = optax.adamw(1e-3)


@jax.jit
def step(params, state, x, y, key):
    key, used = jax.random.split(key)
    value, grads = jax.value_and_grad(loss)(params, x, y, used)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, key, value


rng = np.random.default_rng(16)
params = (
    (rng.standard_normal((40, 80)) / np.sqrt(40)).astype(np.float32),
    np.zeros(80, np.float32),
    (rng.standard_normal((80, 6)) / np.sqrt(80)).astype(np.float32),
    np.zeros(6, np.float32),
)
x = rng.standard_normal((32, 40)).astype(np.float32)
y = (rng.random((32, 6)) < 0.5).astype(np.float32)
key = jax.random.key(3)
state = optimizer.init(params)
for _ in range(2):
    params, state, key, value = step(params, state, x, y, key)
print(float(value))

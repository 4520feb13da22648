"""Mixed precision with dynamic loss scaling: an f16 MLP's gradients of the scaled loss,
unscaled, checked finite (`isfinite` over every gradient), the update applied only when all
are finite and the scale grown or halved; SGD with momentum, f32 master parameters."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

half = jnp.float16


def loss(params, x, labels):
    w1, b1, w2, b2 = (p.astype(half) for p in params)
    h = jax.nn.relu(x.astype(half) @ w1 + b1)
    logits = (h @ w2 + b2).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], -1))


optimizer = optax.sgd(0.05, momentum=0.9)


@jax.jit
def step(params, state, scale, x, labels):
    grads = jax.grad(lambda p: loss(p, x, labels) * scale)(params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / scale, grads)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads]))
    updates, new_state = optimizer.update(grads, state, params)
    new_params = optax.apply_updates(params, updates)

    def pick(new, old):
        return jax.tree.map(lambda a, b: jnp.where(finite, a, b), new, old)

    scale = jnp.where(finite, scale * 2.0, scale / 2.0)
    return pick(new_params, params), pick(new_state, state), scale


rng = np.random.default_rng(13)
params = (
    (rng.standard_normal((32, 128)) / np.sqrt(32)).astype(np.float32),
    np.zeros(128, np.float32),
    (rng.standard_normal((128, 10)) / np.sqrt(128)).astype(np.float32),
    np.zeros(10, np.float32),
)
x = (rng.standard_normal((64, 32)) * 4).astype(np.float32)
labels = rng.integers(0, 10, 64).astype(np.int32)
state = optimizer.init(params)
scale = jnp.float32(2.0 ** 12)
for _ in range(3):
    params, state, scale = step(params, state, scale, x, labels)
print(float(scale))

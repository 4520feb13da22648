"""An MLP's first Adam step whose gradients cancel: a mirrored batch (x and -x with the same
label) makes the first layer's bias gradient nearly zero, so the update +-lr * sign(g) of
those biases rests on rounding noise. bf16 compute, f32 parameters, optax Adam."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def loss(params, x, labels):
    w1, b1, w2, b2 = (p.astype(bf) for p in params)
    h = jnp.tanh(x.astype(bf) @ w1 + b1)
    logits = (h @ w2 + b2).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


optimizer = optax.adam(1e-3)


@jax.jit
def step(params, state, x, labels):
    grads = jax.grad(loss)(params, x, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state


rng = np.random.default_rng(5)
params = (
    (rng.standard_normal((32, 64)) / np.sqrt(32)).astype(np.float32),
    np.zeros(64, np.float32),
    (rng.standard_normal((64, 8)) / np.sqrt(64)).astype(np.float32),
    np.zeros(8, np.float32),
)
half = rng.standard_normal((16, 32)).astype(np.float32)
x = np.concatenate([half, -half])
labels = np.concatenate([rng.integers(0, 8, 16)] * 2).astype(np.int32)
params, state = step(params, optimizer.init(params), x, labels)
print([float(p.sum()) for p in params])

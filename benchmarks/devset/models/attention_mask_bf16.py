"""A bf16 attention whose mask comes from a comparison: keys whose bf16 score against a learned
query falls below zero are masked out (a comparison of rounded values), then softmax, the
weighted values, a squared-error loss; the gradient and one momentum-SGD step, f32 parameters."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

T, D = 32, 32
bf = jnp.bfloat16


def loss(params, x, target):
    wq, wk, wv, probe = (p.astype(bf) for p in params)
    xb = x.astype(bf)
    q, k, v = xb @ wq, xb @ wk, xb @ wv
    keep = (k @ probe) > 0
    scores = (q @ k.T) / np.sqrt(D).astype(bf)
    scores = jnp.where(keep[None, :], scores, jnp.asarray(-1e4, bf))
    attn = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(bf)
    out = (attn @ v).astype(jnp.float32)
    return jnp.mean((out - target) ** 2)


optimizer = optax.sgd(0.1, momentum=0.9)


@jax.jit
def step(params, state, x, target):
    value, grads = jax.value_and_grad(loss)(params, x, target)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(17)
params = tuple((rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for _ in range(3))
params += (rng.standard_normal(D).astype(np.float32),)
x = rng.standard_normal((T, D)).astype(np.float32)
target = rng.standard_normal((T, D)).astype(np.float32)
params, state, value = step(params, optimizer.init(params), x, target)
print(float(value))

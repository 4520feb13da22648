"""A small transformer block's Adafactor steps: factored second moments (row and column
means of g^2), update clipping by RMS, relative step sizes; bf16 compute, f32 parameters."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def layer_norm(x, scale):
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * scale).astype(bf)


def loss(params, tokens, targets):
    emb, wq, wk, wv, wo, w1, w2, ln = params
    x = emb.astype(bf)[tokens]
    h = layer_norm(x, ln)
    q, k, v = (h @ w.astype(bf) for w in (wq, wk, wv))
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], bf))
    mask = jnp.tril(jnp.ones(scores.shape[-2:], bool))
    scores = jnp.where(mask, scores, jnp.asarray(-1e4, bf))
    attn = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(bf)
    x = x + jnp.einsum("bqk,bkd->bqd", attn, v) @ wo.astype(bf)
    x = x + jax.nn.relu(layer_norm(x, ln) @ w1.astype(bf)) @ w2.astype(bf)
    logits = (x @ emb.astype(bf).T).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], -1))


optimizer = optax.adafactor(1e-2)


@jax.jit
def step(params, state, tokens, targets):
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(12)
d, vocab = 64, 80
shapes = [(vocab, d), (d, d), (d, d), (d, d), (d, d), (d, 4 * d), (4 * d, d)]
params = [(rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for s in shapes]
params = (*params, np.ones(d, np.float32))
tokens = rng.integers(0, vocab, (4, 16)).astype(np.int32)
targets = np.roll(tokens, -1, axis=1)
state = optimizer.init(params)
for _ in range(2):
    params, state, value = step(params, state, tokens, targets)
print(float(value))

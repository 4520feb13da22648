"""A GPT-like decoder training step: 1 layer, d_model 64, 4 heads, sequence 16, vocabulary 100,
batch 4; bf16 compute, f32 parameters, optax AdamW, two steps of the jitted step (the first
AdamW update is +-lr * sign(g): biases whose gradient nearly cancels flip with rounding)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

D, H, T, V, B = 64, 4, 16, 100, 4
bf = jnp.bfloat16


def init(rng):
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    return {"emb": w(V, D), "pos": w(T, D) * 0.1, "ln1": np.ones(D, np.float32),
            "qkv": w(D, 3 * D), "qkv_b": np.zeros(3 * D, np.float32), "out": w(D, D),
            "out_b": np.zeros(D, np.float32), "ln2": np.ones(D, np.float32),
            "up": w(D, 4 * D), "up_b": np.zeros(4 * D, np.float32), "down": w(4 * D, D),
            "down_b": np.zeros(D, np.float32), "lnf": np.ones(D, np.float32)}


def norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale.astype(bf)


def loss(params, tokens, targets):
    p = {k: v.astype(bf) for k, v in params.items()}
    x = p["emb"][tokens] + p["pos"]
    h = norm(x, p["ln1"])
    q, k, v = jnp.split(h @ p["qkv"] + p["qkv_b"], 3, axis=-1)
    q, k, v = (a.reshape(B, T, H, D // H) for a in (q, k, v))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D // H).astype(bf)
    causal = jnp.arange(T)[:, None] >= jnp.arange(T)[None, :]
    scores = jnp.where(causal, scores, jnp.finfo(bf).min)
    attn = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(bf)
    y = jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(B, T, D)
    x = x + y @ p["out"] + p["out_b"]
    h = norm(x, p["ln2"])
    x = x + jax.nn.gelu(h @ p["up"] + p["up_b"]) @ p["down"] + p["down_b"]
    logits = (norm(x, p["lnf"]) @ p["emb"].T).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


optimizer = optax.adamw(1e-3, weight_decay=0.01)


@jax.jit
def step(params, state, tokens, targets):
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(21)
params = init(rng)
state = optimizer.init(params)
for _ in range(2):
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    targets = np.roll(tokens, -1, axis=1)
    params, state, value = step(params, state, tokens, targets)
    print(float(value))

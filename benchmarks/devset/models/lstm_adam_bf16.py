"""An LSTM language model under `lax.scan` (sigmoid and tanh gates in a while loop's body):
vocabulary 50, width 32, sequence 24, batch 4; bf16 matmuls, f32 cell state, Adam with
gradient clipping by global norm; two steps."""
import jax
import jax.numpy as jnp
import optax

V, D, T, B = 50, 32, 24, 4
bf = jnp.bfloat16
keys = jax.random.split(jax.random.PRNGKey(1), 6)
params = {"emb": jax.random.normal(keys[0], (V, D)) * 0.1,
          "w": jax.random.normal(keys[1], (2 * D, 4 * D)) * 0.1,
          "b": jnp.zeros(4 * D), "out": jax.random.normal(keys[2], (D, V)) * 0.1}


def loss(p, tokens, targets):
    x = p["emb"][tokens].astype(bf)

    def cell(carry, xt):
        h, c = carry
        z = (jnp.concatenate([xt, h], -1) @ p["w"].astype(bf)).astype(jnp.float32) + p["b"]
        i, f, g, o = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = (jax.nn.sigmoid(o) * jnp.tanh(c)).astype(bf)
        return (h, c), h

    start = (jnp.zeros((B, D), bf), jnp.zeros((B, D)))
    _, hs = jax.lax.scan(cell, start, x.swapaxes(0, 1))
    logits = (hs.swapaxes(0, 1) @ p["out"].astype(bf)).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))


@jax.jit
def train_step(p, state, tokens, targets):
    value, grads = jax.value_and_grad(loss)(p, tokens, targets)
    updates, state = optimizer.update(grads, state, p)
    return optax.apply_updates(p, updates), state, value


state = optimizer.init(params)
tokens = jax.random.randint(keys[3], (B, T), 0, V)
targets = jax.random.randint(keys[4], (B, T), 0, V)
for _ in range(2):
    params, state, value = train_step(params, state, tokens, targets)
print(float(value))

"""A bag-of-embeddings classifier whose batch repeats tokens: the embedding gradient is a
scatter-add with duplicate indices (in bf16), a tied output projection, mean pooling with a
padding mask, Adam with weight decay masked off the embeddings."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def loss(params, tokens, labels):
    emb, w = params["emb"].astype(bf), params["w"].astype(bf)
    vectors = emb[tokens]
    mask = (tokens != 0)[..., None].astype(bf)
    pooled = (vectors * mask).sum(1) / jnp.maximum(mask.sum(1), jnp.asarray(1, bf))
    logits = (jnp.tanh(pooled @ w) @ emb[:12].T).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], -1))


optimizer = optax.adamw(2e-3, weight_decay=0.1, mask={"emb": False, "w": True})


@jax.jit
def step(params, state, tokens, labels):
    grads = jax.grad(loss)(params, tokens, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state


rng = np.random.default_rng(18)
params = {"emb": (rng.standard_normal((50, 32)) * 0.1).astype(np.float32),
          "w": (rng.standard_normal((32, 32)) / np.sqrt(32)).astype(np.float32)}
tokens = rng.integers(0, 20, (16, 24)).astype(np.int32)  # 20 of 50 tokens: many repeats
labels = rng.integers(0, 12, 16).astype(np.int32)
state = optimizer.init(params)
for _ in range(2):
    params, state = step(params, state, tokens, labels)
print(float(params["w"].sum()))

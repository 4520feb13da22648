"""A mixture-of-experts router in bf16: argmax and top-2 of bf16 logits pick experts whose
outputs are mixed; the first Adam step of the router and the experts."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

E, D, N = 4, 8, 32
bf = jnp.bfloat16


def loss(params, x, y):
    router, w = (p.astype(bf) for p in params)
    logits = jnp.tanh(x.astype(bf) @ router) * 4
    best = jnp.argmax(logits, axis=-1)
    gate, chosen = jax.lax.top_k(logits, 2)
    out = jnp.einsum("nd,ed->ne", x.astype(bf), w)
    picked = jnp.take_along_axis(out, chosen, axis=1) * gate
    mixed = picked.sum(-1).astype(jnp.float32) + jnp.take_along_axis(
        out, best[:, None], axis=1)[:, 0].astype(jnp.float32)
    return jnp.mean((mixed - y) ** 2)


optimizer = optax.adam(1e-2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    updates, _ = optimizer.update(grads, optimizer.init(params), params)
    return optax.apply_updates(params, updates), value


rng = np.random.default_rng(3)
router = (rng.standard_normal((D, E)) * 0.3).astype(np.float32)
router[:, 1] = router[:, 0] + rng.uniform(-0.01, 0.01, D).astype(np.float32)
params = (router, rng.standard_normal((E, D)).astype(np.float32))
x = rng.standard_normal((N, D)).astype(np.float32)
y = rng.standard_normal(N).astype(np.float32)
print(step(params, x, y)[1])

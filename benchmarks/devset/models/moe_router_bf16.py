"""A mixture-of-experts layer's training step: bf16 router logits, top-2 experts per token by
`lax.top_k`, the argmax expert counted for a load-balancing loss, 4 experts of 32 -> 64 -> 32;
f32 parameters, optax Adam, the first step."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

E, D, F, N = 4, 32, 64, 64
bf = jnp.bfloat16


def loss(params, x, y):
    router, w_in, w_out = (p.astype(bf) for p in params)
    logits = x.astype(bf) @ router
    gate, chosen = jax.lax.top_k(logits, 2)
    gate = jax.nn.softmax(gate.astype(jnp.float32), axis=-1).astype(bf)
    hidden = jax.nn.relu(jnp.einsum("nd,edf->nef", x.astype(bf), w_in))
    out = jnp.einsum("nef,efd->ned", hidden, w_out)
    picked = jnp.take_along_axis(out, chosen[:, :, None], axis=1)
    mixed = (picked * gate[:, :, None]).sum(axis=1).astype(jnp.float32)
    top = jnp.argmax(logits, axis=-1)
    load = jnp.mean(jax.nn.one_hot(top, E), axis=0)
    probs = jnp.mean(jax.nn.softmax(logits.astype(jnp.float32), axis=-1), axis=0)
    return jnp.mean((mixed - y) ** 2) + 0.01 * E * jnp.sum(load * probs)


optimizer = optax.adam(1e-3)


@jax.jit
def step(params, state, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(3)
params = ((rng.standard_normal((D, E)) * 0.02).astype(np.float32),
          (rng.standard_normal((E, D, F)) / np.sqrt(D)).astype(np.float32),
          (rng.standard_normal((E, F, D)) / np.sqrt(F)).astype(np.float32))
x = rng.standard_normal((N, D)).astype(np.float32)
y = rng.standard_normal((N, D)).astype(np.float32)
params, state, value = step(params, optimizer.init(params), x, y)
print(float(value))

"""InfoNCE with a learned temperature: bf16 towers, cosine similarity, logsumexp in f32,
a MoCo-like negatives queue updated by dynamic_update_slice, top-k accuracy, Adagrad."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


def tower(w, x):
    h = jax.nn.softplus(x.astype(jnp.bfloat16) @ w[0].astype(jnp.bfloat16))
    z = h @ w[1].astype(jnp.bfloat16)
    z = z.astype(jnp.float32)
    return z / jnp.sqrt(jnp.sum(z * z, -1, keepdims=True) + 1e-6)

def loss(p, a, b, queue):
    za, zb = tower(p["a"], a), tower(p["b"], b)
    temp = jnp.exp(jnp.clip(p["logt"], -3.0, 3.0))
    pos = jnp.sum(za * zb, -1) / temp
    neg = (za @ queue.T) / temp
    allv = jnp.concatenate([pos[:, None], neg, (za @ zb.T) / temp], axis=1)
    nce = jax.nn.logsumexp(allv, axis=1) - pos
    _, top = jax.lax.top_k(allv, 3)
    acc = jnp.mean(jnp.any(top == 0, axis=1).astype(jnp.float32))
    return nce.mean(), (zb, acc)

opt = optax.adagrad(0.05)

@jax.jit
def step(p, s, a, b, queue, ptr):
    (v, (zb, acc)), g = jax.value_and_grad(loss, has_aux=True)(p, a, b, queue)
    u, s = opt.update(g, s, p)
    queue = jax.lax.dynamic_update_slice(queue, jax.lax.stop_gradient(zb), (ptr, 0))
    return optax.apply_updates(p, u), s, queue, v, acc

r = np.random.default_rng(11)
def tw(i, o):
    return [(r.standard_normal((i, 64)) / np.sqrt(i)).astype(np.float32),
            (r.standard_normal((64, o)) / 8).astype(np.float32)]
p = {"a": tw(20, 32), "b": tw(12, 32), "logt": np.float32(np.log(0.1))}
a = r.standard_normal((16, 20)).astype(np.float32)
b = r.standard_normal((16, 12)).astype(np.float32)
q = r.standard_normal((64, 32)).astype(np.float32)
q /= np.linalg.norm(q, axis=1, keepdims=True)
s = opt.init(p)
for t in range(2):
    p, s, q, v, acc = step(p, s, a, b, q, np.int32(16 * t))
print(float(v), float(acc))

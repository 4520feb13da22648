"""f16 residual MLP blocks under lax.scan with jax.checkpoint (optimization barriers), a safe
log with jnp.where, reduce_precision, argsort-based ranking loss, floor_divide/remainder of
negative ints for position buckets, RMSProp with f32 master weights."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


def block(h, w):
    z = jax.nn.silu(h @ w.astype(jnp.float16))
    return h + z * jnp.float16(0.5), None

def loss(p, x, pos, target):
    h = x.astype(jnp.float16)
    h, _ = jax.lax.scan(jax.checkpoint(block), h, p["ws"])
    h = jax.lax.reduce_precision(h.astype(jnp.float32), exponent_bits=5, mantissa_bits=7)
    bucket = jnp.floor_divide(pos, 3) + jnp.remainder(pos, 3)
    score = h @ p["v"] + p["bias"][bucket]
    order = jnp.argsort(-target, stable=True)
    ranked = score[order]
    margin = ranked[:-1] - ranked[1:]
    safe = jnp.where(margin > -20, jnp.log1p(jnp.exp(-margin)), -margin)
    sq = jnp.where(score > 0, jnp.log(jnp.where(score > 0, score, 1.0)), 0.0)
    return safe.mean() + 0.01 * sq.mean()

opt = optax.rmsprop(1e-2, decay=0.9, eps=1e-6)

@jax.jit
def step(p, s, x, pos, target):
    v, g = jax.value_and_grad(loss)(p, x, pos, target)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, v

r = np.random.default_rng(23)
p = {"ws": (r.standard_normal((3, 16, 16)) / 4).astype(np.float32),
     "v": (r.standard_normal(16) / 4).astype(np.float32), "bias": np.zeros(8, np.float32)}
x = r.standard_normal((12, 16)).astype(np.float32)
pos = r.integers(-9, 12, 12).astype(np.int32)
pos = np.clip(pos, -6, 14)
target = r.standard_normal(12).astype(np.float32)
s = opt.init(p)
for _ in range(2):
    p, s, v = step(p, s, x, pos, target)
print(float(v))

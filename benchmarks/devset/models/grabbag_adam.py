"""A grab-bag training step: Poisson NLL (lgamma; digamma in its gradient), atan2 features,
cummax and cumsum, a segment max (scatter-max), sort, rfft magnitudes, cbrt, erf_inv,
bf16 erf-GELU, Adam with gradient clipping, and an rbg PRNG key inside the step."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


def loss(p, x, counts, seg, key):
    ang = jnp.arctan2(x[:, :8], x[:, 8:16] + 0.1)
    spec = jnp.abs(jnp.fft.rfft(x, axis=1))[:, :8]
    feats = jnp.concatenate([ang, spec, jnp.cbrt(x[:, 16:]), jax.lax.cummax(x, axis=1)[:, -8:]], 1)
    h = jax.nn.gelu((feats.astype(jnp.bfloat16) @ p["w1"].astype(jnp.bfloat16)),
                    approximate=False).astype(jnp.float32)
    noise = jax.random.normal(key, h.shape) * 0.01
    h = h + noise + jax.scipy.special.erfinv(jnp.clip(jnp.sort(h, axis=1) * 0.1, -0.9, 0.9))
    seg_max = jax.ops.segment_max(h, seg, num_segments=4)
    h = h - seg_max[seg] * 0.1 + jnp.cumsum(h, axis=1) * 0.01
    rate = jnp.exp(jnp.clip(h @ p["w2"] + p["b2"], -10, 10))
    nll = rate - counts * jnp.log(rate) + jax.lax.lgamma(counts + 1.0)
    return nll.mean()

opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2))

@jax.jit
def step(p, s, x, counts, seg, key):
    key, sub = jax.random.split(key)
    v, g = jax.value_and_grad(loss)(p, x, counts, seg, sub)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, v, key

r = np.random.default_rng(7)
p = {"w1": (r.standard_normal((32, 48)) / 6).astype(np.float32),
     "w2": (r.standard_normal((48, 3)) / 7).astype(np.float32), "b2": np.zeros(3, np.float32)}
x = r.standard_normal((20, 24)).astype(np.float32)
counts = r.poisson(2.0, (20, 3)).astype(np.float32)
seg = np.sort(r.integers(0, 4, 20)).astype(np.int32)
key = jax.random.key(0, impl="rbg")
s = opt.init(p)
for _ in range(2):
    p, s, v, key = step(p, s, x, counts, seg, key)
print(float(v))

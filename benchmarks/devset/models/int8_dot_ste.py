"""Int8 weight-quantized matmul (int8 x int8 -> int32 dot, per-channel scales), a custom_vjp
straight-through estimator, a lax.cond, SGD with momentum. f32 master weights."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.custom_vjp
def qmatmul(x, w):
    ws = jnp.max(jnp.abs(w), axis=0) / 127.0
    wq = jnp.clip(jnp.round(w / ws), -127, 127).astype(jnp.int8)
    xs = jnp.max(jnp.abs(x), axis=1, keepdims=True) / 127.0
    xq = jnp.clip(jnp.round(x / xs), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(xq, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * xs * ws

def qmatmul_fwd(x, w):
    return qmatmul(x, w), (x, w)

def qmatmul_bwd(res, g):
    x, w = res
    return g @ w.T, x.T @ g

qmatmul.defvjp(qmatmul_fwd, qmatmul_bwd)

def loss(p, x, y, t):
    h = jnp.tanh(qmatmul(x, p["w1"]) + p["b1"])
    h = jax.lax.cond(t > 0, lambda h: h * jax.nn.sigmoid(h), lambda h: jnp.clip(h, -0.5, 0.5), h)
    out = qmatmul(h, p["w2"]) + p["b2"]
    decay = sum(jnp.sum(v ** 2) for v in jax.tree.leaves(p))
    return jnp.mean(optax.huber_loss(out, y, delta=0.5)) + 1e-4 * decay

opt = optax.sgd(0.1, momentum=0.9)

@jax.jit
def step(p, s, x, y, t):
    v, g = jax.value_and_grad(loss)(p, x, y, t)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, v

r = np.random.default_rng(5)
p = {"w1": (r.standard_normal((32, 48)) / 6).astype(np.float32), "b1": np.zeros(48, np.float32),
     "w2": (r.standard_normal((48, 4)) / 7).astype(np.float32), "b2": np.zeros(4, np.float32)}
x = r.standard_normal((24, 32)).astype(np.float32)
y = r.standard_normal((24, 4)).astype(np.float32)
s = opt.init(p)
for t in range(2):
    p, s, v = step(p, s, x, y, np.int32(t))
print(float(v))

"""Conv + max/avg pooling, GELU (erf and tanh), layer norm, label-smoothed CE, LAMB. f32."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

def loss(p, x, y):
    h = jax.lax.conv_general_dilated(x, p["k"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.gelu(h, approximate=False)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    h = h.reshape(h.shape[0], -1)
    h = layernorm(h, p["g"], p["b"])
    h = jax.nn.gelu(h @ p["w1"], approximate=True)
    logits = h @ p["w2"]
    labels = optax.smooth_labels(jax.nn.one_hot(y, 10), 0.1)
    return optax.softmax_cross_entropy(logits, labels).mean()

opt = optax.lamb(1e-2, weight_decay=1e-4)

@jax.jit
def step(p, s, x, y):
    v, g = jax.value_and_grad(loss)(p, x, y)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, v

r = np.random.default_rng(3)
p = {"k": (r.standard_normal((3, 3, 3, 8)) / 5).astype(np.float32),
     "g": np.ones(128, np.float32), "b": np.zeros(128, np.float32),
     "w1": (r.standard_normal((128, 32)) / 11).astype(np.float32),
     "w2": (r.standard_normal((32, 10)) / 6).astype(np.float32)}
x = r.standard_normal((16, 16, 16, 3)).astype(np.float32)
y = r.integers(0, 10, 16).astype(np.int32)
s = opt.init(p)
for _ in range(2):
    p, s, v = step(p, s, x, y)
print(float(v))

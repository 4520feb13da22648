"""A tiny vision transformer: patch embedding by a strided convolution, a class token,
learned positions, layer norm, one attention block with gelu, label-smoothed cross entropy;
bf16 compute, AdamW with a warm-up cosine schedule and global-norm clipping."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-6)


def loss(params, images, labels):
    patch, cls, pos, wqkv, wo, w1, w2, head = (p.astype(bf) for p in params)
    x = jax.lax.conv_general_dilated(images.astype(bf), patch, (4, 4), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = x.reshape(x.shape[0], -1, x.shape[-1])
    x = jnp.concatenate([jnp.broadcast_to(cls, (x.shape[0], 1, x.shape[-1])), x], 1) + pos
    h = layer_norm(x)
    q, k, v = jnp.split(h @ wqkv, 3, -1)
    att = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) * (q.shape[-1] ** -0.5), -1)
    x = x + jnp.einsum("bqk,bkd->bqd", att, v) @ wo
    x = x + jax.nn.gelu(layer_norm(x) @ w1) @ w2
    logits = (layer_norm(x[:, 0]) @ head).astype(jnp.float32)
    targets = optax.smooth_labels(jax.nn.one_hot(labels, logits.shape[-1]), 0.1)
    return optax.softmax_cross_entropy(logits, targets).mean()


schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 2, 10)
optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=0.05))


@jax.jit
def step(params, state, images, labels):
    value, grads = jax.value_and_grad(loss)(params, images, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(14)
d = 48
shapes = [(4, 4, 3, d), (1, 1, d), (1, 17, d), (d, 3 * d), (d, d), (d, 2 * d), (2 * d, d),
          (d, 10)]
params = tuple((rng.standard_normal(s) * 0.05).astype(np.float32) for s in shapes)
images = rng.standard_normal((8, 16, 16, 3)).astype(np.float32)
labels = rng.integers(0, 10, 8).astype(np.int32)
state = optimizer.init(params)
for _ in range(3):
    params, state, value = step(params, state, images, labels)
print(float(value))

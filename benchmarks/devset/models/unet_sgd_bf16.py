"""A small conv encoder-decoder: a strided convolution down, a transposed convolution up, group
norm and silu, in bf16 (NHWC, 2 x 16 x 16 x 3 images); momentum SGD on an MSE loss; two
steps."""
import jax
import jax.numpy as jnp
import optax

bf = jnp.bfloat16
keys = jax.random.split(jax.random.PRNGKey(2), 6)
params = {"c1": jax.random.normal(keys[0], (3, 3, 3, 16)) * 0.2,
          "c2": jax.random.normal(keys[1], (3, 3, 16, 32)) * 0.1,
          "u1": jax.random.normal(keys[2], (3, 3, 32, 16)) * 0.1,
          "c3": jax.random.normal(keys[3], (3, 3, 16, 3)) * 0.1,
          "g": jnp.ones(32), "bb": jnp.zeros(32)}
NUMBERS = ("NHWC", "HWIO", "NHWC")


def conv(x, kernel, stride):
    return jax.lax.conv_general_dilated(x, kernel.astype(bf), stride, "SAME",
                                        dimension_numbers=NUMBERS)


def group_norm(x, g, b, groups=4):
    n, h, w, c = x.shape
    y = x.astype(jnp.float32).reshape(n, h, w, groups, c // groups)
    y = (y - y.mean((1, 2, 4), keepdims=True)) / jnp.sqrt(y.var((1, 2, 4), keepdims=True) + 1e-5)
    return (y.reshape(n, h, w, c) * g + b).astype(bf)


def net(p, x):
    h = jax.nn.silu(conv(x.astype(bf), p["c1"], (1, 1)))
    h = jax.nn.silu(group_norm(conv(h, p["c2"], (2, 2)), p["g"], p["bb"]))
    h = jax.lax.conv_transpose(h, p["u1"].astype(bf), (2, 2), "SAME", dimension_numbers=NUMBERS)
    return conv(jax.nn.silu(h), p["c3"], (1, 1)).astype(jnp.float32)


def loss(p, x):
    return jnp.mean((net(p, x) - x) ** 2)


optimizer = optax.sgd(1e-2, momentum=0.9)


@jax.jit
def train_step(p, state, x):
    value, grads = jax.value_and_grad(loss)(p, x)
    updates, state = optimizer.update(grads, state, p)
    return optax.apply_updates(p, updates), state, value


state = optimizer.init(params)
images = jax.random.normal(keys[4], (2, 16, 16, 3))
for _ in range(2):
    params, state, value = train_step(params, state, images)
print(float(value))

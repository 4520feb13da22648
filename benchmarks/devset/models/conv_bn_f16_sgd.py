"""A conv + batch-norm block in f16 with momentum SGD: 3x3 convolution of 8 x 8 x 8 x 8 (NHWC),
batch norm (x - mean) / sqrt(var + eps), relu, global pool, linear head; two steps of the
jitted step with optax SGD (momentum 0.9), f32 parameters."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

f16 = jnp.float16


def loss(params, x, labels):
    kernel, gamma, beta, head = (p.astype(f16) for p in params)
    y = jax.lax.conv_general_dilated(x.astype(f16), kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mean = y.mean(axis=(0, 1, 2))
    var = y.var(axis=(0, 1, 2))
    y = (y - mean) / jnp.sqrt(var + f16(1e-3)) * gamma + beta
    pooled = jax.nn.relu(y).mean(axis=(1, 2))
    logits = (pooled @ head).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


optimizer = optax.sgd(0.05, momentum=0.9)


@jax.jit
def step(params, state, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(8)
params = ((rng.standard_normal((3, 3, 8, 16)) / np.sqrt(72)).astype(np.float32),
          np.ones(16, np.float32), np.zeros(16, np.float32),
          (rng.standard_normal((16, 10)) / 4).astype(np.float32))
state = optimizer.init(params)
for _ in range(2):
    x = rng.standard_normal((8, 8, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 10, 8).astype(np.int32)
    params, state, value = step(params, state, x, labels)
    print(float(value))

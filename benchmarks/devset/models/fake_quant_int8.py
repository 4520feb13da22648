"""Quantization-aware training: weights and activations fake-quantized to int8 (scale from
the max magnitude, round to nearest even, clip to [-127, 127], a straight-through gradient),
f32 throughout, SGD with Nesterov momentum."""
import jax
import jax.numpy as jnp
import numpy as np
import optax


def fake_quant(x):
    scale = jnp.max(jnp.abs(x)) / 127.0
    q = jnp.clip(jnp.round(x / scale), -127, 127) * scale
    return x + jax.lax.stop_gradient(q - x)


def loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(fake_quant(x) @ fake_quant(w1) + b1)
    logits = fake_quant(h) @ fake_quant(w2) + b2
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], -1))


optimizer = optax.sgd(0.05, momentum=0.9, nesterov=True)


@jax.jit
def step(params, state, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


rng = np.random.default_rng(17)
params = (
    (rng.standard_normal((24, 64)) / np.sqrt(24)).astype(np.float32),
    np.zeros(64, np.float32),
    (rng.standard_normal((64, 10)) / np.sqrt(64)).astype(np.float32),
    np.zeros(10, np.float32),
)
x = rng.standard_normal((48, 24)).astype(np.float32)
labels = rng.integers(0, 10, 48).astype(np.int32)
state = optimizer.init(params)
for _ in range(2):
    params, state, value = step(params, state, x, labels)
print(float(value))

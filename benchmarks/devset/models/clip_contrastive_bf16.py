"""A CLIP-like contrastive step: two towers, L2-normalized embeddings, logits scaled by a
learned exp(temperature), cross-entropy both ways; the step also returns its accuracy
(argmax of the logits against the diagonal) and the median logit (a sort); bf16 compute,
AdamW."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

bf = jnp.bfloat16


def towers(params, a, b):
    wa, wb, log_t = params
    ea = jnp.tanh(a.astype(bf) @ wa.astype(bf))
    eb = jnp.tanh(b.astype(bf) @ wb.astype(bf))
    ea = ea / jnp.linalg.norm(ea.astype(jnp.float32), axis=-1, keepdims=True).astype(bf)
    eb = eb / jnp.linalg.norm(eb.astype(jnp.float32), axis=-1, keepdims=True).astype(bf)
    return (ea @ eb.T).astype(jnp.float32) * jnp.exp(log_t)


def loss(params, a, b):
    logits = towers(params, a, b)
    labels = jnp.arange(logits.shape[0])
    forward = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    backward = optax.softmax_cross_entropy_with_integer_labels(logits.T, labels)
    return (forward.mean() + backward.mean()) / 2, logits


optimizer = optax.adamw(1e-3)


@jax.jit
def step(params, state, a, b):
    (value, logits), grads = jax.value_and_grad(loss, has_aux=True)(params, a, b)
    updates, state = optimizer.update(grads, state, params)
    accuracy = jnp.mean(jnp.argmax(logits, -1) == jnp.arange(logits.shape[0]))
    return optax.apply_updates(params, updates), state, value, accuracy, jnp.median(logits)


rng = np.random.default_rng(19)
params = ((rng.standard_normal((20, 32)) / np.sqrt(20)).astype(np.float32),
          (rng.standard_normal((24, 32)) / np.sqrt(24)).astype(np.float32),
          np.float32(np.log(10.0)))
a = rng.standard_normal((16, 20)).astype(np.float32)
b = rng.standard_normal((16, 24)).astype(np.float32)
state = optimizer.init(params)
for _ in range(2):
    params, state, value, accuracy, median = step(params, state, a, b)
print(float(value), float(accuracy), float(median))

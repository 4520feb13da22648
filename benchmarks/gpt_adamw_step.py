"""A GPT-style decoder's training step (bf16 compute, f32 parameters, optax AdamW, the whole
step under `jax.jit`), the program issue 21's model-size localization is measured on.

    PYENV_VERSION=3.12.1 python3.12 benchmarks/gpt_adamw_step.py \
        [LAYERS [REPEAT [D HEADS VOCAB BATCH]]]

Needs JAX, Flax and optax; run under XLA's dump flags (`eval_vs_xla.py` makes the dump).
With REPEAT, the compiled step is then run REPEAT more times on the same arguments and the best
wall time is printed as `xla-seconds S`, the least CPU time of all its threads as
`xla-cpu-seconds S` (what `eval_vs_xla.py` compares the evaluator with).
2 layers, d_model 256, 4 heads, sequence 128, vocabulary 1,000, batch 8 unless D HEADS VOCAB
BATCH say otherwise (`model_size.py`: GPT-2 small's shape is 12 768 12 50304 4).
"""

import sys
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

LAYERS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
D, HEADS, V, B = (int(a) for a in sys.argv[3:7]) if len(sys.argv) > 6 else (256, 4, 1000, 8)
T = 128


class Block(nn.Module):
    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.LayerNorm(dtype=jnp.bfloat16)(x)
        mask = nn.make_causal_mask(jnp.ones((x.shape[0], T)))
        x = x + nn.SelfAttention(num_heads=HEADS, dtype=jnp.bfloat16)(h, mask=mask)
        h = nn.LayerNorm(dtype=jnp.bfloat16)(x)
        h = nn.Dense(4 * D, dtype=jnp.bfloat16)(h)
        return x + nn.Dense(D, dtype=jnp.bfloat16)(nn.gelu(h))


class Gpt(nn.Module):
    @nn.compact
    def __call__(self, tokens: jax.Array) -> jax.Array:
        x = nn.Embed(V, D, dtype=jnp.bfloat16)(tokens)
        x = x + self.param("position", nn.initializers.normal(0.02), (T, D)).astype(x.dtype)
        for _ in range(LAYERS):
            x = Block()(x)
        return nn.Dense(V, dtype=jnp.bfloat16)(nn.LayerNorm(dtype=jnp.bfloat16)(x))


model = Gpt()
optimizer = optax.adamw(1e-3)


@jax.jit
def train_step(params, state, tokens, targets):
    def loss(p):
        logits = model.apply(p, tokens).astype(jnp.float32)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    value, grads = jax.value_and_grad(loss)(params)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


key = jax.random.PRNGKey(0)
tokens = jax.random.randint(key, (B, T), 0, V)
targets = jnp.roll(tokens, -1, axis=1)
params = model.init(key, tokens)
state = optimizer.init(params)
new_params, new_state, value = train_step(params, state, tokens, targets)
print(float(value))
times, cpu_times = [], []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 0):
    start, cpu_start = time.perf_counter(), time.process_time()
    jax.block_until_ready(train_step(params, state, tokens, targets))
    times.append(time.perf_counter() - start)
    cpu_times.append(time.process_time() - cpu_start)  # all of XLA's threads
if times:
    print(f"xla-seconds {min(times)}")
    print(f"xla-cpu-seconds {min(cpu_times)}")

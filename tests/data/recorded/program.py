"""A layer norm and a matmul, jitted, run twice without --xla_dump_hlo_snapshots and recorded
with workbench.record.jax (the one line marked below)."""

import jax
import jax.numpy as jnp
import numpy as np

from workbench.record.jax import record


def ln(x, w):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return jnp.tanh(((x - mean) * jax.lax.rsqrt(var + 1e-5)) @ w)


ln = record(jax.jit(ln))  # the recording: io/ in the --xla_dump_to folder

rng = np.random.default_rng(0)
for _ in range(2):
    x = rng.standard_normal((4, 16), dtype=np.float32)
    w = rng.standard_normal((16, 8), dtype=np.float32)
    ln(x, w).block_until_ready()

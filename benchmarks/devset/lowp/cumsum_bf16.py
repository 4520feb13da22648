"""bf16 cumulative sums of a 64 x 256 array along both axes (a reduce-window in HLO)."""
import jax
import jax.numpy as jnp
import numpy as np


def cumsums(x):
    return jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=0)


rng = np.random.default_rng(8)
x = rng.uniform(-1, 1, (64, 256)).astype(jnp.bfloat16)
print([float(r.astype(jnp.float32).sum()) for r in jax.jit(cumsums)(x)])

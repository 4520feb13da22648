"""f16 x / sqrt(y), a / 3 and x / sqrt(y + 1): XLA's algebraic simplifier rewrites the divisions
into multiplications by rsqrt and by 1/3."""
import jax
import jax.numpy as jnp
import numpy as np


def normalize(x, y, a):
    return x / jnp.sqrt(y), a / np.float16(3.0), x / jnp.sqrt(y + np.float16(1.0))


rng = np.random.default_rng(6)
x = rng.standard_normal((128, 128)).astype(np.float16)
y = rng.uniform(0.1, 20.0, (128, 128)).astype(np.float16)
a = (rng.standard_normal((128, 128)) * 100).astype(np.float16)
print([float(r.astype(np.float32).sum()) for r in jax.jit(normalize)(x, y, a)])

"""f16 x / sqrt(y) and a / 3 upcast to f32 inside the jitted function: XLA's algebraic
simplifier rewrites the f16 divisions into multiplications by rsqrt(y) and 1/3."""
import jax
import jax.numpy as jnp
import numpy as np


def normalize(x, y, a):
    return (x / jnp.sqrt(y)).astype(jnp.float32), (a / np.float16(3.0)).astype(jnp.float32)


rng = np.random.default_rng(14)
x = rng.standard_normal((128, 128)).astype(np.float16)
y = rng.uniform(0.1, 20.0, (128, 128)).astype(np.float16)
a = (rng.standard_normal((128, 128)) * 100).astype(np.float16)
print([float(r.sum()) for r in jax.jit(normalize)(x, y, a)])

"""A rank-4 constant of 8 elements and a rank-3 one of 1: XLA prints index comments in them."""
import jax, jax.numpy as jnp, numpy as np
k = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2) - 3.5
@jax.jit
def f(x):
    return x * k + np.full((1, 1, 1), 0.25, np.float32)
print(f(np.ones((1, 2, 2, 2), np.float32)))

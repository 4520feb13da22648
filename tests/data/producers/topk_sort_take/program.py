import jax, jax.numpy as jnp
from jax import lax
@jax.jit
def topk_sort_take(x, i):
    v, idx = lax.top_k(x, 3)
    s0, s1 = lax.sort((x, jnp.arange(x.shape[-1], dtype=jnp.int32) * jnp.ones_like(x, jnp.int32)), num_keys=1)
    t = jnp.take(x, i, axis=1)
    c = jnp.cumsum(x, axis=1)
    return v, idx, s0, s1, t, c
x = jnp.array([[3., 1., 4., 1., 5., 9., 2., 6.], [2., 7., 1., 8., 2., 8., 1., 8.]], jnp.float32)
i = jnp.array([1, 0, 7], jnp.int32)
print(topk_sort_take(x, i))
print(jax.__version__)

import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(0)
q, k, v = (jnp.asarray(rng.standard_normal((2, 16, 4, 8)), jnp.bfloat16) for _ in range(3))
f = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True))
print(f(q, k, v).astype(jnp.float32).sum())
a = jnp.asarray(rng.standard_normal((32, 64)), jnp.float32)
g = jax.jit(lambda a, b: jnp.dot(a, b, precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32))
print(g(a, a.T).sum())

"""bf16 dots accumulated in f32 (preferred_element_type=float32): a matmul and a batched one."""
import jax
import jax.numpy as jnp
import numpy as np


def dots(a, b, c):
    ab = jnp.matmul(a, b, preferred_element_type=jnp.float32)
    batched = jax.lax.dot_general(
        c, c, (((2,), (2,)), ((0,), (0,))), preferred_element_type=jnp.float32
    )
    return ab, batched


rng = np.random.default_rng(5)
a = rng.standard_normal((128, 256)).astype(jnp.bfloat16)
b = rng.standard_normal((256, 192)).astype(jnp.bfloat16)
c = rng.standard_normal((4, 64, 128)).astype(jnp.bfloat16)
print([float(r.sum()) for r in jax.jit(dots)(a, b, c)])

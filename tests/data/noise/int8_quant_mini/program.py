"""Per-channel int8 weight quantization: round, clip to the integer bounds -127 and 127
(an s32 converted to f32), a cast to int8, an int8 x int8 -> int32 dot, dequantized."""
import jax, jax.numpy as jnp, numpy as np

@jax.jit
def qmatmul(x, w):
    scale = jnp.max(jnp.abs(w), axis=0) / 127.0
    wq = jnp.clip(jnp.round(w / scale), -127, 127).astype(jnp.int8)
    xq = jnp.clip(jnp.round(x * 16.0), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot_general(xq, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * scale / 16.0

r = np.random.default_rng(5)
print(qmatmul(r.standard_normal((4, 16)).astype(np.float32), r.standard_normal((16, 8)).astype(np.float32)))

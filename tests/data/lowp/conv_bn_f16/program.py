"""Small low-precision programs whose f32 results went through bf16/f16 (real XLA CPU dumps)."""
import sys
import jax, jax.numpy as jnp, numpy as np

rng = np.random.default_rng(7)
which = sys.argv[1] if len(sys.argv) > 1 else "conv_bn"
if which == "attention":
    def attention(q, k, v):
        s = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("hqk,hkd->hqd", p, v).astype(jnp.float32)
    q, k, v = (jnp.asarray(rng.standard_normal((2, 16, 16)), jnp.bfloat16) for _ in range(3))
    print(jax.jit(attention)(q, k, v).sum())
elif which == "conv_bn":
    def conv_bn(x, w, gamma, beta):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
        m = y.mean(axis=(0, 2, 3), keepdims=True)
        v = ((y - m) ** 2).mean(axis=(0, 2, 3), keepdims=True)
        out = (y - m) / jnp.sqrt(v + 1e-3) * gamma[None, :, None, None] + beta[None, :, None, None]
        return out.astype(jnp.float32)
    x = jnp.asarray(rng.standard_normal((2, 4, 8, 8)), jnp.float16)
    w = jnp.asarray(rng.standard_normal((8, 4, 3, 3)) / 6, jnp.float16)
    g = jnp.asarray(1 + 0.1 * rng.standard_normal(8), jnp.float16)
    b = jnp.asarray(0.1 * rng.standard_normal(8), jnp.float16)
    print(jax.jit(conv_bn)(x, w, g, b).sum())
elif which == "cumsum":
    def cumsums(x):
        return jnp.cumsum(x, axis=-1)
    x = jnp.asarray(rng.standard_normal((4, 512)), jnp.bfloat16)
    print(jax.jit(cumsums)(x).sum())

"""f16 3x3 convolution (8 x 16 x 16 x 16 NCHW, 32 filters) followed by batch norm and relu."""
import jax
import jax.numpy as jnp
import numpy as np


def conv_bn(x, w, gamma, beta):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
    mean = y.mean(axis=(0, 2, 3), keepdims=True)
    var = y.var(axis=(0, 2, 3), keepdims=True)
    y = (y - mean) / jnp.sqrt(var + 1e-3)
    return jax.nn.relu(y * gamma[None, :, None, None] + beta[None, :, None, None])


rng = np.random.default_rng(3)
x = rng.standard_normal((8, 16, 16, 16)).astype(np.float16)
w = (rng.standard_normal((32, 16, 3, 3)) / 12).astype(np.float16)
gamma = (1 + 0.1 * rng.standard_normal(32)).astype(np.float16)
beta = (0.1 * rng.standard_normal(32)).astype(np.float16)
print(jax.jit(conv_bn)(x, w, gamma, beta).astype(jnp.float32).sum())

"""bf16 and f16 reductions of a 256 x 128 array: sum, mean, var and logsumexp along each axis."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp


def reductions(x):
    return (x.sum(0), x.sum(1), x.mean(0), x.var(1), logsumexp(x, axis=1), x.sum())


rng = np.random.default_rng(4)
data = rng.standard_normal((256, 128)) * 2 + 0.5
f = jax.jit(reductions)
for dtype in (jnp.bfloat16, np.float16):
    print([float(r.astype(jnp.float32).sum()) for r in f(data.astype(dtype))])

import jax, jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax import shard_map

mesh = Mesh(np.array(jax.devices()), ("x",))

@jax.jit
def f(a, w):
    def body(a_block, w):
        partial = jnp.tanh(a_block @ w).sum(axis=0)
        return jax.lax.psum(partial, "x"), a_block * 2.0
    return shard_map(body, mesh=mesh, in_specs=(P("x", None), P()), out_specs=(P(), P("x", None)))(a, w)

a = jax.device_put(jnp.arange(32.0).reshape(8, 4) / 32, NamedSharding(mesh, P("x", None)))
w = jnp.linspace(-1, 1, 12).reshape(4, 3)
print(f(a, w))

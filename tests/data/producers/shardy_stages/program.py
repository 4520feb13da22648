import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
@jax.jit
def f(a, b):
    return jnp.tanh(a @ b).sum(axis=0)
a = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("x", None)))
b = jax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P(None, "y")))
print(f(a, b))

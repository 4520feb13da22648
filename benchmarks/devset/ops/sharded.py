"""A function jitted with explicit shardings over a one-device mesh: sharding annotations
(`xla.sdy.*` custom-calls, `Sharding`; a shard_map's `xla.sdy.GlobalToLocalShape` and
`LocalToGlobalShape`) in the HLO XLA receives."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
sharding = NamedSharding(mesh, PartitionSpec("x"))


def f(a, b):
    c = jax.lax.with_sharding_constraint(a * 2 + b, sharding)
    c = jax.shard_map(lambda t: t - t.mean(), mesh=mesh, in_specs=PartitionSpec("x"),
                      out_specs=PartitionSpec("x"))(c)
    return jnp.tanh(c).sum(axis=0), c


jitted = jax.jit(f, in_shardings=(sharding, sharding), out_shardings=(None, sharding))
a = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
jax.block_until_ready(jitted(a, a + 1))

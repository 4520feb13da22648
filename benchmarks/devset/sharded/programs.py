"""Sharded JAX programs on 8 virtual CPU devices: each function returns (jitted function,
global inputs). Run by `make_dumps.py`; every program saves its own output as
`<name>.out.npy` (tuples as `<name>.out.<i>.npy`) beside its dump."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map


def _mesh(shape, names):
    return Mesh(np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape), names)


def _rand(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _loss(params, x, y):
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def _sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return loss, [p - 0.1 * g for p, g in zip(params, grads, strict=True)]


def data_parallel_mlp():
    mesh = _mesh((8,), ("data",))
    batch = NamedSharding(mesh, P("data", None))
    replicated = NamedSharding(mesh, P())
    step = jax.jit(_sgd_step, in_shardings=([replicated, replicated], batch, batch),
                   out_shardings=(replicated, [replicated, replicated]))
    return step, ([_rand(1, (16, 32)), _rand(2, (32, 8))], _rand(3, (64, 16)), _rand(4, (64, 8)))


def tensor_parallel_mlp():
    mesh = _mesh((4, 2), ("data", "model"))
    step = jax.jit(_sgd_step, in_shardings=(
        [NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None))],
        NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P("data", None))))
    return step, ([_rand(1, (16, 32)), _rand(2, (32, 8))], _rand(3, (64, 16)), _rand(4, (64, 8)))


def tensor_parallel_mlp_large():
    """The same step at 512 x 1024 x 256 (for `benchmarks/spmd_bench.py`)."""
    step, _ = tensor_parallel_mlp()
    return step, ([_rand(1, (512, 1024)), _rand(2, (1024, 256))], _rand(3, (512, 512)),
                  _rand(4, (512, 256)))


def shard_map_collectives():
    mesh = _mesh((8,), ("i",))

    def body(x):
        right = jax.lax.ppermute(x, "i", [(k, (k + 1) % 8) for k in range(8)])
        gathered = jax.lax.all_gather(x, "i", tiled=True)
        scattered = jax.lax.psum_scatter(gathered * 2.0, "i", tiled=True)
        swapped = jax.lax.all_to_all(x, "i", 0, 0, tiled=True)
        total = jax.lax.psum(jnp.sum(x), "i")
        index = jax.lax.axis_index("i").astype(jnp.float32)
        return right + scattered + swapped + total + index

    f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i")))
    return f, (_rand(5, (64, 4)),)


def sharded_reduction():
    mesh = _mesh((8,), ("i",))
    x_sharding = NamedSharding(mesh, P("i", None))

    def f(x):
        return jnp.sum(x, axis=0), jnp.max(x), jnp.cumsum(x, axis=0), jnp.cumsum(x, axis=1)

    return jax.jit(f, in_shardings=(x_sharding,)), (_rand(6, (64, 16)),)


def scan_over_sharded_axis():
    """`lax.scan` along the sharded rows: an exponential moving average of each column."""
    mesh = _mesh((8,), ("i",))

    def f(x):
        def step(carry, row):
            carry = 0.9 * carry + 0.1 * row
            return carry, carry

        return jax.lax.scan(step, jnp.zeros(x.shape[1], x.dtype), x)

    return jax.jit(f, in_shardings=(NamedSharding(mesh, P("i", None)),)), (_rand(12, (32, 8)),)


def mesh_2d():
    mesh = _mesh((2, 4), ("a", "b"))

    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=1)

    shardings = (NamedSharding(mesh, P("a", "b")), NamedSharding(mesh, P("b", None)))
    return jax.jit(f, in_shardings=shardings), (_rand(7, (16, 32)), _rand(8, (32, 8)))


def sharded_heads_attention():
    mesh = _mesh((2, 4), ("data", "heads"))

    def attention(q, k, v):
        logits = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(logits, axis=-1), v)

    s = NamedSharding(mesh, P("data", "heads", None, None))
    shape = (2, 4, 8, 16)
    return jax.jit(attention, in_shardings=(s, s, s)), tuple(_rand(i, shape) for i in (9, 10, 11))


PROGRAMS = {f.__name__: f for f in (data_parallel_mlp, tensor_parallel_mlp,
                                     tensor_parallel_mlp_large,
                                     shard_map_collectives, sharded_reduction,
                                     scan_over_sharded_axis, mesh_2d,
                                     sharded_heads_attention)}

"""One AdamW step of a bf16-computed layer-norm scale (f32 parameters, optax)."""
import jax, jax.numpy as jnp, numpy as np, optax

rng = np.random.default_rng(5)
D = 512
x = jnp.asarray(rng.standard_normal((8, D)), jnp.float32)
params = {"scale": jnp.ones(D, jnp.float32)}
opt = optax.adamw(1e-3, weight_decay=0.1)
state = opt.init(params)


def loss(params, x):
    h = x.astype(jnp.bfloat16)
    h = (h - h.mean(-1, keepdims=True)) * jax.lax.rsqrt(h.var(-1, keepdims=True) + 1e-5)
    y = h * params["scale"].astype(jnp.bfloat16)
    return jnp.mean(jnp.square(y.astype(jnp.float32) - 1.0))


@jax.jit
def step(params, state, x):
    value, grads = jax.value_and_grad(loss)(params, x)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


print(step(params, state, x)[2])

"""A decoder whose attention is `jax.nn.dot_product_attention` (causal; in bf16 its dots name
`algorithm=dot_bf16_bf16_f32`), 2 layers under `lax.scan`: d_model 64, 4 heads, sequence 32,
vocabulary 100, batch 4; bf16 compute, f32 parameters, optax AdamW, two steps."""
import jax
import jax.numpy as jnp
import optax

L, D, H, T, V, B = 2, 64, 4, 32, 100, 4
bf = jnp.bfloat16
keys = jax.random.split(jax.random.PRNGKey(0), 8)


def weights(key, shape):
    return jax.random.normal(key, shape, jnp.float32) * 0.05


def init():
    return {"emb": weights(keys[0], (V, D)), "out": weights(keys[1], (D, V)),
            "layers": {"qkv": weights(keys[2], (L, D, 3 * D)), "o": weights(keys[3], (L, D, D)),
                       "w1": weights(keys[4], (L, D, 4 * D)),
                       "w2": weights(keys[5], (L, 4 * D, D)),
                       "g1": jnp.ones((L, D)), "g2": jnp.ones((L, D))}}


def norm(x, g):
    x32 = x.astype(jnp.float32)
    y = (x32 - x32.mean(-1, keepdims=True)) * jax.lax.rsqrt(x32.var(-1, keepdims=True) + 1e-5)
    return (y * g).astype(bf)


def layer(x, p):
    h = norm(x, p["g1"])
    q, k, v = jnp.split(h @ p["qkv"].astype(bf), 3, axis=-1)
    q, k, v = (t.reshape(B, T, H, D // H) for t in (q, k, v))
    attended = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    x = x + attended.reshape(B, T, D) @ p["o"].astype(bf)
    h = norm(x, p["g2"])
    return x + jax.nn.gelu(h @ p["w1"].astype(bf)) @ p["w2"].astype(bf), None


def loss(params, tokens, targets):
    x = params["emb"][tokens].astype(bf)
    x, _ = jax.lax.scan(layer, x, params["layers"])
    logits = (x @ params["out"].astype(bf)).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


optimizer = optax.adamw(1e-3)


@jax.jit
def train_step(params, state, tokens, targets):
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, value


params = init()
state = optimizer.init(params)
tokens = jax.random.randint(keys[6], (B, T), 0, V)
targets = jax.random.randint(keys[7], (B, T), 0, V)
for _ in range(2):
    params, state, value = train_step(params, state, tokens, targets)
print(float(value))

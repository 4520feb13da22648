"""Split of an rbg key and normal draws: XLA's loop over threefry rounds reads one tuple
element twice (two get-tuple-elements of the same index) after `simplification`."""
import jax
@jax.jit
def draw(key):
    key, sub = jax.random.split(key)
    return jax.random.normal(sub, (4, 6)), key
print(draw(jax.random.key(0, impl="rbg"))[0])

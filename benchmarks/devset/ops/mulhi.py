"""Integer multiply-high (`mulhi` in HLO): jax.lax.mulhi on every integer width."""
import jax
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, -1 if info.min else 1, 0, 3, info.max // 3], dtype)
    y = np.array([info.min, info.max, info.max, 7, -1 if info.min else 5, info.min + 1], dtype)
    jax.block_until_ready(jax.jit(lax.mulhi)(x, y))

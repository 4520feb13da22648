"""Fixed inputs for the linear-algebra dump programs beside this file.

Each program jits one function and runs it on the inputs `matrices()` gives, once per element
type (f32, f64, c64, c128) and with a leading batch dimension, so one dump holds a module per
type. Run a program from an empty folder with the dump flags of the corpus README.
"""

from __future__ import annotations

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def matrices(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    """A well-conditioned random array of `shape` and `dtype` (complex parts when complex)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    """A Hermitian positive definite array of `shape` (..., n, n)."""
    a = matrices(shape, dtype, seed)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def run_all(function, *make_inputs) -> None:
    """Run jitted `function` on the inputs each `make_inputs(dtype)` returns, per dtype."""
    jitted = jax.jit(function)
    for dtype in DTYPES:
        for make in make_inputs:
            result = jitted(*make(dtype))
            jax.block_until_ready(result)

"""Record a JAX function's compiled calls, on any platform (CPU, GPU, TPU):

    from workbench.record.jax import record
    step = record(jax.jit(step))          # or @record on the function

Each call's dynamic arguments (copied to the host before the call: donated buffers are gone
after it) and results are written as `.npy` to the recording folder (default: `io/` in the
`--xla_dump_to` folder), with the module's name, the SHA-256 of its optimized HLO text and its
entry layout (`compiled.as_text()`, what XLA dumps as `*after_optimizations.txt`) so the
workbench finds the module without being told. jax is imported when `record` is called.

Arguments JAX leaves out of the entry computation (unused ones) are left out here too; a
function with static arguments is recorded when its leaves are the entry's parameters, and
skipped (the manifest says why) when they are not.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from workbench.formats.recording import entry_layout, parameter_count
from workbench.record.writer import (
    DEFAULT_CALLS,
    DEFAULT_MAX_BYTES,
    Executable,
    default_folder,
    writer_for,
)


def record(function: Callable[..., Any], out: Path | str | None = None, *,
           max_bytes: int = DEFAULT_MAX_BYTES, calls: int = DEFAULT_CALLS) -> Callable[..., Any]:
    """`function` (jitted if it is not) recording the first `calls` calls of each executable
    it compiles to `out`, each call at most `max_bytes` of arguments and results."""
    import jax

    jitted = function if hasattr(function, "lower") else jax.jit(function)
    writer = writer_for(Path(out) if out is not None else default_folder(),
                        f"jax {jax.__version__}")
    executables: dict[Any, tuple[Executable, list[int] | None]] = {}

    @functools.wraps(function)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = jax.tree.flatten((args, kwargs))
        signature = (tree, tuple(_leaf_signature(leaf) for leaf in leaves))
        if signature not in executables:
            executables[signature] = _executable(jitted.lower(*args, **kwargs).compile(),
                                                 len(leaves))
        executable, kept = executables[signature]
        arguments = None
        if kept is None:
            writer.skip(executable, "its arguments' leaves are not the entry's parameters "
                        "(static arguments): record a function that closes over them")
        elif writer.wants(executable, calls):
            chosen = [leaves[k] for k in kept]
            if writer.fits(executable, sum(_nbytes(leaf) for leaf in chosen), max_bytes):
                arguments = [np.asarray(leaf) for leaf in chosen]
        result = jitted(*args, **kwargs)
        if arguments is not None:
            outputs = jax.tree.leaves(result)
            size = sum(a.nbytes for a in arguments) + sum(_nbytes(o) for o in outputs)
            if writer.fits(executable, size, max_bytes):
                writer.write(executable, arguments, [np.asarray(o) for o in outputs])
        return result

    return recorded


def _leaf_signature(leaf: Any) -> Any:
    """What a compiled executable depends on: shape and type of an array, a scalar's type."""
    shape = getattr(leaf, "shape", None)
    if shape is None:
        return type(leaf)
    return (tuple(shape), str(getattr(leaf, "dtype", "")), getattr(leaf, "weak_type", False),
            str(getattr(leaf, "sharding", "")))


def _nbytes(leaf: Any) -> int:
    return int(getattr(leaf, "nbytes", 0) or np.asarray(leaf).nbytes)


def _executable(compiled: Any, leaves: int) -> tuple[Executable, list[int] | None]:
    """The compiled call's module name, fingerprint and layout, and which argument leaves are
    its entry's parameters (None when that cannot be told)."""
    text = compiled.as_text()
    header = text.partition("\n")[0]
    module = header.removeprefix("HloModule ").partition(",")[0].strip()
    layout = entry_layout(header.encode())
    executable = Executable(module, "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
                            layout)
    kept = getattr(getattr(compiled, "_executable", None), "_kept_var_idx", None)
    indices = sorted(kept) if kept is not None else list(range(leaves))
    parameters = parameter_count(layout)
    if compiled.in_tree.num_leaves != leaves or (parameters is not None
                                                 and parameters != len(indices)):
        return executable, None
    return executable, indices

"""The platform's floating-point environment: subnormals read and written as zero.

XLA CPU runs its kernels with denormals-are-zero and flush-to-zero set (MXCSR DAZ/FTZ): a
subnormal operand reads as zero and a subnormal result is written as zero. `lgamma` of the
smallest f64 subnormal, 4.9e-324, records `inf` there (`x > 0` is false, `log` gives -inf),
where IEEE arithmetic, and this evaluator by default, gives 744.486. Both are legal outcomes of
the same program; an evaluation in `flush_subnormals` mode gives the platform's, so a recording
can be judged against either (`steps.Replay`).

The flush is applied to every instruction's float result and to the arguments, so each
operation reads and writes no subnormal; arithmetic inside one handler (the partial sums of a
reduce, a dot's products) is not flushed, which only matters where those are subnormal too.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.registry import Handler, Value

# What the recorded result is judged against when the platform flushes (see `steps.Replay`).
PLATFORMS_THAT_FLUSH = frozenset(("cpu",))


@cache
def _smallest_normal(dtype: np.dtype) -> np.generic | None:
    """The smallest normal number of a float dtype; None for what is not flushed."""
    kind = kind_of(dtype)
    if kind not in ("float", "narrow"):
        return None
    try:
        import ml_dtypes

        return dtype.type(ml_dtypes.finfo(dtype).smallest_normal)
    except (ImportError, ValueError, TypeError):
        return dtype.type(np.finfo(dtype).smallest_normal)


def flush_subnormals(value: Value) -> Value:
    """`value` with every subnormal float element replaced by a zero of its sign."""
    if isinstance(value, tuple):
        return tuple(flush_subnormals(element) for element in value)
    array = np.asarray(value)
    if array.dtype.kind == "c":
        real, imaginary = flush_subnormals(array.real), flush_subnormals(array.imag)
        return (np.asarray(real) + 1j * np.asarray(imaginary)).astype(array.dtype)
    tiny = _smallest_normal(array.dtype)
    if tiny is None:
        return value
    work = array.astype(np.float64) if kind_of(array.dtype) == "narrow" else array
    magnitude = np.abs(work)
    subnormal = (magnitude < tiny) & (magnitude != 0)
    if not subnormal.any():
        return value
    return np.where(subnormal, np.copysign(0.0, work), work).astype(array.dtype)


def flushing(handler: Handler) -> Handler:
    """`handler` writing no subnormal result."""

    def flushed(interpreter: Any, instruction: Instruction, operands: list[Value]
                ) -> Value:  # the interpreter is passed through (`registry.Handler`)
        return flush_subnormals(handler(interpreter, instruction, operands))

    return flushed



def either_way(reference: Value, flushed: Value, recorded: Value) -> tuple[Value, str] | None:
    """The reference with each element the recording is nearer to in the `flushed`
    evaluation taken from there (an element may legally be either), and a note of how many
    and the first; None when no element is taken."""
    taken: list[tuple[int, tuple, str]] = []  # per array: count, first index, its values

    def mix(ref: Value, flat: Value, rec: Value) -> Value:
        if isinstance(ref, tuple):
            if not isinstance(flat, tuple) or not isinstance(rec, tuple) or \
                    not len(ref) == len(flat) == len(rec):
                return ref
            return tuple(mix(*parts) for parts in zip(ref, flat, rec, strict=True))
        a, b, r = np.asarray(ref), np.asarray(flat), np.asarray(rec)
        if not a.shape == b.shape == r.shape or not a.dtype == b.dtype == r.dtype:
            return ref
        if kind_of(a.dtype) in ("float", "narrow"):
            a64, b64, r64 = (x.astype(np.float64) for x in (a, b, r))
            same_as_flushed = (r64 == b64) | (np.isnan(r64) & np.isnan(b64))
            same_as_reference = (r64 == a64) | (np.isnan(r64) & np.isnan(a64))
            with np.errstate(invalid="ignore"):
                nearer = np.abs(r64 - b64) < np.abs(r64 - a64)
            take = (same_as_flushed | nearer) & ~same_as_reference
        else:
            take = (r == b) & (r != a)
        if not take.any():
            return ref
        first = tuple(int(i) for i in np.argwhere(take)[0])
        taken.append((int(take.sum()), first,
                      f"reference {a[first].item()!r}, with subnormals as zero "
                      f"{b[first].item()!r}, recorded {r[first].item()!r}"))
        return np.where(take, b, a)

    mixed = mix(reference, flushed, recorded)
    if not taken:
        return None
    count = sum(n for n, _, _ in taken)
    _, first, values = taken[0]
    return mixed, (f"{count} element(s) of the recorded result match the reference only with "
                   f"subnormals read and written as zero, first at "
                   f"[{','.join(map(str, first))}] ({values})")

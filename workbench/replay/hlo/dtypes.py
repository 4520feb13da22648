"""Element types as the evaluator computes with them.

XLA computes the narrow float types (f16, bf16, the f8 family) one operation at a time in f32
and rounds each result back to the element type (HloEvaluator instantiates its typed visitor
as `<half, float>` and `<bfloat16, float>`; the CPU backend's float normalization inserts the
same converts). `compute_dtype` gives that wider type; integers and f32/f64 compute in
themselves, with two's-complement wraparound as numpy arrays already do.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from workbench.hlo_ir import numpy_dtype
from workbench.replay.errors import Unsupported

F32 = np.dtype(np.float32)

NARROW_FLOATS = frozenset(
    ("f16", "bf16", "f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz",
     "f8e4m3", "f8e3m4", "f4e2m1fn", "f8e8m0fnu")
)
FLOATS = NARROW_FLOATS | {"f32", "f64"}
COMPLEX = frozenset(("c64", "c128"))
SIGNED = frozenset(("s8", "s16", "s32", "s64"))
UNSIGNED = frozenset(("u8", "u16", "u32", "u64"))
# Sub-byte integers: (bits, signed). The evaluator holds them one per byte, in int8/uint8
# (sub_byte.py keeps them in range); s1/u1 have no numpy form for snapshots to use.
SUB_BYTE_WIDTHS = {"s2": (2, True), "s4": (4, True), "u2": (2, False), "u4": (4, False)}
_UNMODELLED = frozenset(("s1", "u1"))


@cache
def dtype_of(element_type: str) -> np.dtype:
    """The numpy dtype the evaluator computes `element_type` in (int8/uint8 for the sub-byte
    integers); Unsupported for types numpy cannot hold."""
    if element_type in _UNMODELLED:
        raise Unsupported(f"element type {element_type}")
    if element_type in SUB_BYTE_WIDTHS:
        return np.dtype(np.int8 if SUB_BYTE_WIDTHS[element_type][1] else np.uint8)
    try:
        return np.dtype(numpy_dtype(element_type))
    except (ValueError, ImportError):
        raise Unsupported(f"element type {element_type}") from None


@cache
def kind_of(dtype: np.dtype) -> str:
    """'pred', 'signed', 'unsigned', 'float', 'narrow' (float computed in f32) or 'complex'."""
    if dtype == np.bool_:
        return "pred"
    if dtype.kind == "i":
        return "signed"
    if dtype.kind == "u":
        return "unsigned"
    if dtype.kind == "c":
        return "complex"
    if dtype in (np.float32, np.float64):
        return "float"
    if dtype.kind == "f" or dtype.itemsize <= 2:  # float16 and the ml_dtypes floats ('V' kind)
        return "narrow"
    raise Unsupported(f"element type {dtype}")


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype XLA does arithmetic in for `dtype` (f32 for the narrow floats)."""
    return F32 if kind_of(dtype) == "narrow" else dtype


@cache
def uint_of_size(itemsize: int) -> np.dtype:
    return np.dtype(f"u{itemsize}")


@cache
def int_of_size(itemsize: int) -> np.dtype:
    return np.dtype(f"i{itemsize}")


def contiguous(x: np.ndarray) -> np.ndarray:
    """A C-contiguous array of `x` (np.ascontiguousarray would turn a scalar into shape (1,))."""
    array = np.asarray(x)
    return array if array.flags.c_contiguous else array.copy()


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`x.astype(dtype)`, converting only the distinct elements of a broadcast (a read-only
    broadcast of the converted ones): ml_dtypes' casts of bf16 run about 15 times slower on
    a strided array, and XLA's bias adds and scalings broadcast their narrow operands."""
    if x.size and 0 in x.strides:
        distinct = x[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in x.strides)]
        return np.broadcast_to(distinct.astype(dtype), x.shape)
    return x.astype(dtype)


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Signed integers ordered as XLA's TOTALORDER orders floats.

    -NaN < -Inf < ... < -0.0 < +0.0 < ... < +Inf < +NaN: flip the magnitude bits of negative
    values so that the integer order of the bit patterns is the float order.
    """
    bits = contiguous(x).view(int_of_size(x.dtype.itemsize))
    width = 8 * x.dtype.itemsize
    magnitude = np.array((1 << (width - 1)) - 1, dtype=bits.dtype)
    return bits ^ ((bits >> (width - 1)) & magnitude)


def float_to_int(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Float to integer as XLA does it: truncate toward zero, saturate, NaN -> 0.

    numpy's own cast is undefined out of range; XLA clamps (checked against the CPU backend:
    f32 -> u32 of -1.5 is 0, of inf is 4294967295, of NaN is 0).
    """
    info = np.iinfo(target)
    work = x.astype(np.float64) if x.dtype.itemsize < 8 else x
    if target.itemsize < 8:
        clipped = np.clip(np.nan_to_num(work, nan=0.0), info.min, info.max)
        return np.trunc(clipped).astype(target)
    # 64-bit targets: the bounds are not exactly representable as floats, so saturate by mask.
    low = float(info.min)  # -2**63 or 0, exact
    high = float(2 ** (8 * target.itemsize - (1 if info.min < 0 else 0)))  # exact power of two
    nan = np.isnan(work)
    too_high = work >= high
    too_low = work <= low
    safe = np.where(nan | too_high | too_low, 0, np.trunc(work))
    out = safe.astype(target)
    out[too_high] = info.max
    out[too_low] = info.min
    return out


def convert(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """XLA's `convert`: value conversion with XLA's float-to-int and complex rules."""
    source = x.dtype
    if source == target:
        return x
    source_kind = kind_of(source)
    target_kind = kind_of(target)
    if target_kind in ("signed", "unsigned") and source_kind in ("float", "narrow"):
        return float_to_int(x, target)
    if source_kind == "complex" and target_kind != "complex":
        return convert(np.real(x), target)
    if target_kind == "pred":
        return x != 0
    if source_kind == "narrow" and target_kind in ("narrow", "complex"):
        return cast(cast(x, F32), target)
    return cast(x, target)


def bitcast_convert(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Reinterpret bits. A narrower target adds a minor dimension, a wider one consumes it
    (little-endian, as XLA's CPU literals are laid out)."""
    x = contiguous(x)
    if x.dtype.itemsize == target.itemsize:
        return x.view(target)
    if x.dtype.itemsize > target.itemsize:
        ratio = x.dtype.itemsize // target.itemsize
        return x.view(target).reshape(*x.shape, ratio)
    return x.view(target).reshape(x.shape[:-1])

"""How MLIR values live in the replay interpreter: numpy arrays and numpy scalars.

xDSL's own interpreter keeps shaped values in Python lists and computes floats in double
precision. Replaying a pipeline must reproduce the program's arithmetic, so here every value
has its MLIR element type as a numpy dtype:

- `tensor<...>` values are numpy arrays that are never mutated once produced;
- `memref<...>` values are numpy arrays too, but views: a subview writes through to its buffer;
- scalars (`f32`, `i32`, `index`, ...) are numpy scalars (index: int64) or Python ints
  (loop induction variables);
- signless and signed integers are signed numpy integers, `i1` is `bool`, unsigned
  integers (`ui32`, StableHLO) are unsigned numpy integers. Ops that read their operands as
  unsigned (`arith.divui`, ...) reinterpret the bits.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import (
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute

from workbench.replay.errors import EvaluationError, Unsupported

if TYPE_CHECKING:
    from typing_extensions import TypeIs

_FLOATS: dict[type[Attribute], Any] = {
    builtin.Float16Type: np.float16,
    builtin.Float32Type: np.float32,
    builtin.Float64Type: np.float64,
    builtin.BFloat16Type: ml_dtypes.bfloat16,
    builtin.Float8E4M3FNType: ml_dtypes.float8_e4m3fn,
    builtin.Float8E5M2Type: ml_dtypes.float8_e5m2,
    builtin.Float8E4M3FNUZType: ml_dtypes.float8_e4m3fnuz,
    builtin.Float8E5M2FNUZType: ml_dtypes.float8_e5m2fnuz,
    builtin.Float8E4M3B11FNUZType: ml_dtypes.float8_e4m3b11fnuz,
    builtin.Float8E4M3Type: ml_dtypes.float8_e4m3,
    builtin.Float8E3M4Type: ml_dtypes.float8_e3m4,
    builtin.Float8E8M0FNUType: ml_dtypes.float8_e8m0fnu,
    builtin.Float4E2M1FNType: ml_dtypes.float4_e2m1fn,
}

_FLOAT_DTYPES = {np.dtype(value) for value in _FLOATS.values()}

_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def dtype_of(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of an MLIR element type."""
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        table = _UNSIGNED if element_type.signedness.data == Signedness.UNSIGNED else _SIGNED
        if width in table:
            return np.dtype(table[width])
        raise Unsupported(f"element type {element_type}")
    if isinstance(element_type, ComplexType):
        inner = element_type.element_type
        if isinstance(inner, builtin.Float32Type):
            return np.dtype(np.complex64)
        if isinstance(inner, builtin.Float64Type):
            return np.dtype(np.complex128)
        raise Unsupported(f"element type {element_type}")
    float_type = _FLOATS.get(type(element_type))
    if float_type is not None:
        return np.dtype(float_type)
    raise Unsupported(f"element type {element_type}")


def is_shaped(type_: Attribute) -> TypeIs[TensorType | MemRefType | VectorType]:
    return isinstance(type_, TensorType | MemRefType | VectorType)


def static_shape(type_: Attribute) -> tuple[int, ...]:
    """The dimensions of a shaped type; an evaluation error for any other type."""
    if not is_shaped(type_):
        raise EvaluationError(f"expected a tensor, memref or vector type, not {type_}")
    return tuple(type_.get_shape())


def element_type(type_: Attribute) -> Attribute:
    """The element type of a shaped type, or the type itself for scalars."""
    if isinstance(type_, TensorType | MemRefType | VectorType):
        return type_.get_element_type()
    if isinstance(type_, builtin.UnrankedTensorType | builtin.UnrankedMemRefType):
        return type_.element_type
    return type_


def value_dtype(type_: Attribute) -> np.dtype:
    """The dtype of a value of type `type_` (shaped or scalar)."""
    return dtype_of(element_type(type_))


def unsigned_view(values: Any) -> Any:
    """The same bits read as unsigned integers (for `divui`, `cmpi ult`, ...)."""
    array = np.asarray(values)
    if array.dtype.kind == "u" or array.dtype == np.bool_:
        return values
    unsigned = array.view(np.dtype(f"u{array.dtype.itemsize}"))
    return unsigned if array.ndim else unsigned[()]



def shaped_result(value: Any, type_: Attribute) -> Any:
    """`value` as the op's result type: an array for shaped types, a scalar otherwise."""
    dtype = value_dtype(type_)
    array = np.asarray(value)
    if array.dtype != dtype:
        array = array.astype(dtype)
    if is_shaped(type_):
        return array
    return array[()] if array.ndim == 0 else array


def _resource_bytes(attr: DenseResourceAttr, resources: dict[str, str]) -> bytes:
    handle = attr.resource_handle.data
    blob = resources.get(handle)
    if not blob:
        raise Unsupported(f"dense_resource<{handle}> without its data in the file")
    data = bytes.fromhex(blob[2:])
    # MLIR's blob encoding: a little-endian 32-bit alignment, then the raw data.
    return data[4:]


def dense_array(attr: Attribute, resources: dict[str, str] | None = None) -> np.ndarray:
    """The value of a dense elements attribute (`dense<...>`, `dense_resource<...>`)."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        type_ = attr.get_type()
        dtype = dtype_of(element_type(type_))
        shape = static_shape(type_)
        raw = attr.data.data
        element = element_type(type_)
        if isinstance(element, IntegerType) and dtype.itemsize * 8 != element.width.data:
            # i1 (and other narrow integers) are stored one byte per element.
            flat = np.frombuffer(raw, dtype=np.int8).astype(dtype)
        else:
            flat = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)
        count = math.prod(shape)
        if flat.size == 1 and count != 1:
            return np.full(shape, flat[0], dtype=dtype)
        if flat.size != count:
            raise EvaluationError(f"dense attribute holds {flat.size} values for shape {shape}")
        return flat.reshape(shape).copy()
    if isinstance(attr, DenseResourceAttr):
        type_ = attr.type
        dtype = dtype_of(element_type(type_))
        shape = tuple(type_.get_shape())
        raw = _resource_bytes(attr, resources or {})
        element = element_type(type_)
        if isinstance(element, IntegerType) and element.width.data == 1:
            flat = np.frombuffer(raw, dtype=np.uint8).astype(np.bool_)
        else:
            flat = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)
        count = math.prod(shape)
        if flat.size == 1 and count != 1:
            return np.full(shape, flat[0], dtype=dtype)
        if flat.size != count:
            raise EvaluationError(f"dense_resource holds {flat.size} values for shape {shape}")
        return flat.reshape(shape).copy()
    if isinstance(attr, builtin.DenseArrayBase):
        return np.asarray(attr.get_values())
    raise Unsupported(f"constant attribute {attr.name if hasattr(attr, 'name') else attr}")


def constant_value(attr: Attribute, type_: Attribute, resources: dict[str, str]) -> Any:
    """The runtime value of a constant attribute of result type `type_`."""
    if isinstance(attr, builtin.IntegerAttr | builtin.FloatAttr):
        dtype = value_dtype(type_)
        value = attr.value.data
        if isinstance(attr, builtin.IntegerAttr) and dtype.kind in "iub" and dtype != np.bool_:
            # Printed integers may be out of the signed range (`255 : i8`): wrap them.
            bits = dtype.itemsize * 8
            value = int(value) & ((1 << bits) - 1)
            if dtype.kind == "i" and value >= 1 << (bits - 1):
                value -= 1 << bits
        result = np.asarray(value).astype(dtype)
        if is_shaped(type_):
            return np.full(tuple(type_.get_shape()), result, dtype=dtype)
        return result[()]
    array = dense_array(attr, resources)
    if is_shaped(type_):
        return array
    return array.reshape(())[()]


def uninitialized(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A fresh buffer whose contents the program has not defined (`memref.alloc`,
    `tensor.empty`). Reading them is a bug in the IR, so they hold a recognizable poison
    pattern rather than zeros: NaN for floats, 0xA5 bytes for integers, true for i1. A pass
    that drops an initialization (a `linalg.fill` before an accumulation) then changes the
    result instead of going unnoticed."""
    if dtype.kind in "fc" or dtype in _FLOAT_DTYPES:
        return np.full(shape, np.nan, dtype=dtype)
    if dtype == np.bool_:
        return np.ones(shape, dtype=dtype)
    return (
        np.frombuffer(b"\xa5" * (dtype.itemsize * math.prod(shape)), dtype=dtype)
        .reshape(shape)
        .copy()
    )


def mixed_values(static: Attribute, dynamic: tuple[Any, ...]) -> list[int]:
    """Static values of an offsets/sizes/strides list, with the dynamic ones filled in."""
    values: list[int] = []
    remaining = iter(dynamic)
    for value in static.get_values():  # type: ignore[attr-defined]  # a DenseArrayBase in xDSL
        values.append(int(next(remaining)) if value == builtin.DYNAMIC_INDEX else int(value))
    return values


def shape_with(type_: Attribute, dynamic: tuple[Any, ...]) -> tuple[int, ...]:
    """The shape of a shaped type, its dynamic sizes taken from `dynamic` in order."""
    remaining = iter(dynamic)
    return tuple(
        int(next(remaining)) if size == builtin.DYNAMIC_INDEX else int(size)
        for size in static_shape(type_)
    )


def rank_reduced_axes(sizes: list[int], result_shape: tuple[int, ...]) -> list[int]:
    """The unit axes a rank-reducing slice drops, matched left to right as MLIR does."""
    dropped: list[int] = []
    position = 0
    for axis, size in enumerate(sizes):
        expected = result_shape[position] if position < len(result_shape) else None
        if expected is not None and (expected == size or expected == builtin.DYNAMIC_INDEX):
            position += 1
        elif size == 1:
            dropped.append(axis)
        else:
            raise EvaluationError(f"slice sizes {sizes} do not reduce to shape {result_shape}")
    if position != len(result_shape):
        raise EvaluationError(f"slice sizes {sizes} do not reduce to shape {result_shape}")
    return dropped

"""XLA `LiteralProto` -> numpy arrays (constants of `.hlo.pb` modules, snapshot arguments).

Each element type has its own field: repeated numbers (`f32s`, `s64s`, ...), or bytes
(`u8s`, `s8s`, little-endian 16-bit values in `f16s`/`bf16s`/`u16s`/`s16s`, one byte per f8
value, sub-byte types one per byte or packed). The data is stored in the layout's physical
order (minor_to_major), so it is reshaped into physical order and transposed back to the
logical, row-major array the rest of the workbench uses. Types numpy and ml_dtypes cannot hold
(tokens, opaque values) and data whose length does not match the shape raise `LiteralError`.
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import LiteralValue, Shape, numpy_dtype
from workbench.protos import xla_data_pb2

_TYPE_NAMES = {
    value: name.lower() for name, value in xla_data_pb2.PrimitiveType.items()
}
_TYPE_NAMES[xla_data_pb2.OPAQUE_TYPE] = "opaque"
_TYPE_NAMES[xla_data_pb2.PRIMITIVE_TYPE_INVALID] = "invalid"

# element type -> (LiteralProto field, how it is stored)
_REPEATED = {
    "s32": "s32s", "s64": "s64s", "u32": "u32s", "u64": "u64s", "f32": "f32s", "f64": "f64s",
    "pred": "preds",
}
_BYTES = {
    "s8": "s8s", "u8": "u8s", "f16": "f16s", "bf16": "bf16s", "u16": "u16s", "s16": "s16s",
    "f8e5m2": "f8e5m2s", "f8e4m3fn": "f8e4m3fns", "f8e4m3b11fnuz": "f8e4m3b11fnuzs",
    "f8e5m2fnuz": "f8e5m2fnuzs", "f8e4m3fnuz": "f8e4m3fnuzs", "f8e4m3": "f8e4m3s",
    "f8e3m4": "f8e3m4s", "f8e8m0fnu": "f8e8m0fnus",
}
_SUB_BYTE = {  # element type -> (field, bits, signed integer)
    "s1": ("s1s", 1, True), "s2": ("s2s", 2, True), "s4": ("s4s", 4, True),
    "u1": ("u1s", 1, False), "u2": ("u2s", 2, False), "u4": ("u4s", 4, False),
    "f4e2m1fn": ("f4e2m1fns", 4, False),
}
_COMPLEX = {"c64": ("c64s", np.float32), "c128": ("c128s", np.float64)}


class LiteralError(ValueError):
    """A literal that cannot become a numpy value; the message names the type and why."""


def element_type_name(value: int) -> str:
    """`xla.PrimitiveType` number -> the HLO text name (`f32`, `bf16`, `tuple`, ...)."""
    return _TYPE_NAMES.get(value, f"primitive type {value}")


def shape_from_proto(proto: xla_data_pb2.ShapeProto) -> Shape:
    """ShapeProto -> Shape. Unbounded dynamic dimensions (XLA stores INT64_MIN) become -1."""
    element_type = element_type_name(proto.element_type)
    if element_type == "tuple":
        return Shape("tuple", tuple_shapes=tuple(shape_from_proto(s) for s in proto.tuple_shapes))
    dims = tuple(d if d >= 0 else -1 for d in proto.dimensions)
    dynamic = tuple(proto.is_dynamic_dimension)
    layout = None
    extra = ""
    if proto.HasField("layout") and element_type not in ("token", "opaque"):
        layout = tuple(proto.layout.minor_to_major)
        extra = layout_extra(proto.layout)
    return Shape(element_type, dims, dynamic if any(dynamic) else (), layout, (), extra)


def layout_extra(layout: xla_data_pb2.LayoutProto) -> str:
    """The part of a printed layout after `:`, in XLA's order (tiles, tail padding, element
    size, memory space, dynamic metadata prefix); empty for a plain minor_to_major layout."""
    parts = []
    if layout.tiles:
        parts.append("T" + "".join(
            "(" + ",".join("*" if d == -(2**63) else str(d) for d in tile.dimensions) + ")"
            for tile in layout.tiles))
    if layout.tail_padding_alignment_in_elements > 1:
        parts.append(f"L({layout.tail_padding_alignment_in_elements})")
    if layout.element_size_in_bits:
        parts.append(f"E({layout.element_size_in_bits})")
    if layout.memory_space:
        parts.append(f"S({layout.memory_space})")
    if layout.dynamic_shape_metadata_prefix_bytes:
        parts.append(f"M({layout.dynamic_shape_metadata_prefix_bytes})")
    return "".join(parts)


def literal_from_proto(proto: xla_data_pb2.LiteralProto) -> LiteralValue:
    """The value of a literal: an ndarray in logical order, or a tuple for tuple shapes."""
    shape = shape_from_proto(proto.shape)
    if shape.is_tuple:
        if len(proto.tuple_literals) != len(shape.tuple_shapes):
            raise LiteralError(f"tuple literal has {len(proto.tuple_literals)} elements, its "
                               f"shape {shape} has {len(shape.tuple_shapes)}")
        return tuple(literal_from_proto(element) for element in proto.tuple_literals)
    if not shape.is_array:
        raise LiteralError(f"a {shape.element_type} literal has no numpy representation")
    if any(d < 0 for d in shape.dims):
        raise LiteralError(f"literal of shape {shape} has an unbounded dimension")
    try:
        dtype = numpy_dtype(shape.element_type)
    except ValueError as error:
        raise LiteralError(str(error)) from None
    flat = _flat_data(proto, shape, dtype)
    return _logical(flat, shape)


def _flat_data(proto: xla_data_pb2.LiteralProto, shape: Shape, dtype: np.dtype) -> np.ndarray:
    element_type = shape.element_type
    size = shape.size
    if element_type in _REPEATED:
        values = getattr(proto, _REPEATED[element_type])
        _check_count(element_type, len(values), size)
        # A repeated field converts as a sequence, in C: 20 to 300 times `np.fromiter`'s speed
        # (half a second for a training step's 6 million arguments).
        return np.array(values, dtype=dtype)
    if element_type in _COMPLEX:
        field, part = _COMPLEX[element_type]
        values = getattr(proto, field)
        _check_count(element_type, len(values) // 2, size, odd=len(values) % 2 == 1)
        return np.array(values, dtype=part).view(dtype)
    if element_type in _BYTES:
        data = getattr(proto, _BYTES[element_type])
        if len(data) % dtype.itemsize:
            raise LiteralError(f"{element_type} literal has {len(data)} bytes, not a multiple "
                               f"of {dtype.itemsize}")
        _check_count(element_type, len(data) // dtype.itemsize, size)
        if dtype.itemsize == 1:
            return np.frombuffer(data, dtype=np.uint8).view(dtype).copy()
        # 16-bit values are little-endian on the wire, whatever this machine's order.
        words = np.frombuffer(data, dtype="<u2").astype(np.uint16)
        return words.view(dtype)
    field, bits, signed = _SUB_BYTE[element_type]
    return _sub_byte(getattr(proto, field), shape, dtype, bits, signed)


def _sub_byte(data: bytes, shape: Shape, dtype: np.dtype, bits: int,
              signed: bool) -> np.ndarray:
    """s1/s2/s4/u1/u2/u4/f4 values: one per byte (low bits), or packed as XLA packs them
    (first element in the most significant bits) when the layout says `element_size_in_bits`
    or the byte count only fits the packed form."""
    size = shape.size
    raw = np.frombuffer(data, dtype=np.uint8)
    per_byte = 8 // bits
    packed_length = -(-size // per_byte)
    if len(raw) == size and not (len(raw) == packed_length and shape.layout_extra == f"E({bits})"):
        values = raw
    elif len(raw) == packed_length:
        shifts = np.array([bits * (per_byte - 1 - j) for j in range(per_byte)], dtype=np.uint8)
        values = ((raw[:, None] >> shifts[None, :]).reshape(-1))[:size]
    else:
        raise LiteralError(f"{shape.element_type} literal has {len(raw)} bytes for {size} "
                           f"elements (expected {size}, or {packed_length} packed)")
    mask = (1 << bits) - 1
    values = (values & mask).astype(np.uint8)
    if shape.element_type.startswith("f"):
        return values.view(dtype)
    if signed:
        wide = values.astype(np.int16)
        wide = np.where(wide >= (1 << (bits - 1)), wide - (1 << bits), wide).astype(np.int8)
        return wide.astype(dtype)
    return values.astype(dtype)


def _check_count(element_type: str, count: int, size: int, odd: bool = False) -> None:
    if count != size or odd:
        raise LiteralError(f"{element_type} literal has {count} values, its shape needs {size}")


def _logical(flat: np.ndarray, shape: Shape) -> np.ndarray:
    """Reorder data stored in layout (minor_to_major) order into a row-major array."""
    rank = shape.rank
    layout = shape.layout
    if rank <= 1 or not layout or list(layout) == list(range(rank - 1, -1, -1)):
        return flat.reshape(shape.dims)
    if sorted(layout) != list(range(rank)):
        raise LiteralError(f"layout {{{','.join(map(str, layout))}}} is not a permutation of "
                           f"the {rank} dimensions of {shape}")
    major_to_minor = list(reversed(layout))
    physical = flat.reshape([shape.dims[d] for d in major_to_minor])
    return np.ascontiguousarray(physical.transpose([major_to_minor.index(d)
                                                    for d in range(rank)]))

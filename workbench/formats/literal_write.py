"""numpy values -> XLA `LiteralProto` (the inverse of `literal.py`, for written snapshots).

Arrays are written in row-major order with the matching default layout (minor_to_major
n-1..0); 16-bit values as little-endian bytes, sub-byte values one per byte (low bits),
complex values interleaved, tuples as tuple literals.
"""

from __future__ import annotations

import numpy as np

from workbench.formats.literal import _BYTES, _COMPLEX, _REPEATED, _SUB_BYTE
from workbench.hlo_ir import LiteralValue, Shape
from workbench.protos import xla_data_pb2


def shape_to_proto(shape: Shape, proto: xla_data_pb2.ShapeProto) -> None:
    """Fill `proto` with `shape` (row-major layout for arrays)."""
    proto.element_type = xla_data_pb2.PrimitiveType.Value(shape.element_type.upper())
    if shape.is_tuple:
        for part in shape.tuple_shapes:
            shape_to_proto(part, proto.tuple_shapes.add())
        return
    proto.dimensions.extend(shape.dims)
    proto.layout.minor_to_major.extend(range(len(shape.dims) - 1, -1, -1))


def literal_to_proto(value: LiteralValue, shape: Shape) -> xla_data_pb2.LiteralProto:
    """The `LiteralProto` of `value`, whose HLO shape is `shape` (its element type decides
    the field). Raises ValueError when the value does not fit the shape."""
    proto = xla_data_pb2.LiteralProto()
    _fill(proto, value, shape)
    return proto


def _fill(proto: xla_data_pb2.LiteralProto, value: LiteralValue, shape: Shape) -> None:
    if shape.is_tuple:
        if not isinstance(value, tuple) or len(value) != len(shape.tuple_shapes):
            raise ValueError(f"a value for {shape} must be a tuple of {len(shape.tuple_shapes)}")
        shape_to_proto(shape, proto.shape)
        for part, part_shape in zip(value, shape.tuple_shapes, strict=True):
            _fill(proto.tuple_literals.add(), part, part_shape)
        return
    array = np.array(value, order="C", copy=True)  # (ascontiguousarray makes 0-d 1-d)
    if array.shape != tuple(shape.dims):
        raise ValueError(f"a value of shape {array.shape} for {shape}")
    shape_to_proto(shape, proto.shape)
    element_type = shape.element_type
    flat = array.reshape(-1)
    if element_type in _REPEATED:
        getattr(proto, _REPEATED[element_type]).extend(flat.tolist())
    elif element_type in _COMPLEX:
        field, component = _COMPLEX[element_type]
        getattr(proto, field).extend(flat.view(component).tolist())
    elif element_type in _BYTES:
        if flat.dtype.itemsize == 2:
            data = flat.view(np.uint16).astype("<u2").tobytes()
        else:
            data = flat.view(np.uint8).tobytes()
        setattr(proto, _BYTES[element_type], data)
    elif element_type in _SUB_BYTE:
        field, bits, _ = _SUB_BYTE[element_type]
        raw = flat.view(np.uint8) if flat.dtype.itemsize == 1 else flat.astype(np.int64)
        setattr(proto, field, (raw.astype(np.int64) & ((1 << bits) - 1)).astype(np.uint8)
                .tobytes())
    else:
        raise ValueError(f"cannot write a {element_type} literal")

"""LiteralProto -> numpy: every element type numpy + ml_dtypes can hold, layouts, tuples, and
clear errors. Literals are built with the generated proto classes the way XLA fills them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from workbench.formats.literal import LiteralError, literal_from_proto, shape_from_proto
from workbench.hlo_ir import numpy_dtype
from workbench.protos import xla_data_pb2

PT = xla_data_pb2.PrimitiveType


def literal(element_type: str, dims: tuple[int, ...],
            layout: tuple[int, ...] | None = None) -> xla_data_pb2.LiteralProto:
    proto = xla_data_pb2.LiteralProto()
    proto.shape.element_type = PT.Value(element_type.upper())
    proto.shape.dimensions.extend(dims)
    proto.shape.layout.minor_to_major.extend(
        layout if layout is not None else range(len(dims) - 1, -1, -1))
    return proto


def physical(values: np.ndarray, layout: tuple[int, ...]) -> np.ndarray:
    """The elements of `values` in the order a layout stores them (minor dimension fastest)."""
    return np.transpose(values, list(reversed(layout))).reshape(-1)


REPEATED = [("s32", "s32s"), ("s64", "s64s"), ("u32", "u32s"), ("u64", "u64s"),
            ("f32", "f32s"), ("f64", "f64s"), ("pred", "preds")]


@pytest.mark.parametrize(("element_type", "field"), REPEATED)
def test_repeated_fields(element_type: str, field: str) -> None:
    dtype = numpy_dtype(element_type)
    values = (np.arange(6) % 2 == 1) if element_type == "pred" else np.arange(6) * 3
    if element_type in ("s32", "s64", "f32", "f64"):
        values = values - 7
    expected = np.asarray(values, dtype=dtype).reshape(2, 3)
    proto = literal(element_type, (2, 3))
    getattr(proto, field).extend(expected.reshape(-1).tolist())
    value = literal_from_proto(proto)
    assert value.dtype == dtype and value.shape == (2, 3)
    assert np.array_equal(value, expected)


def test_integer_extremes() -> None:
    proto = literal("u64", (2,))
    proto.u64s.extend([0, 2**64 - 1])
    assert literal_from_proto(proto).tolist() == [0, 2**64 - 1]
    proto = literal("s64", (2,))
    proto.s64s.extend([-(2**63), 2**63 - 1])
    assert literal_from_proto(proto).tolist() == [-(2**63), 2**63 - 1]


BYTES = [
    ("s8", "s8s", np.int8), ("u8", "u8s", np.uint8), ("f16", "f16s", np.float16),
    ("bf16", "bf16s", ml_dtypes.bfloat16), ("u16", "u16s", np.uint16),
    ("s16", "s16s", np.int16), ("f8e5m2", "f8e5m2s", ml_dtypes.float8_e5m2),
    ("f8e4m3fn", "f8e4m3fns", ml_dtypes.float8_e4m3fn),
    ("f8e4m3b11fnuz", "f8e4m3b11fnuzs", ml_dtypes.float8_e4m3b11fnuz),
    ("f8e5m2fnuz", "f8e5m2fnuzs", ml_dtypes.float8_e5m2fnuz),
    ("f8e4m3fnuz", "f8e4m3fnuzs", ml_dtypes.float8_e4m3fnuz),
    ("f8e4m3", "f8e4m3s", ml_dtypes.float8_e4m3), ("f8e3m4", "f8e3m4s", ml_dtypes.float8_e3m4),
    ("f8e8m0fnu", "f8e8m0fnus", ml_dtypes.float8_e8m0fnu),
]


@pytest.mark.parametrize(("element_type", "field", "dtype"), BYTES)
def test_byte_fields(element_type: str, field: str, dtype: type) -> None:
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        expected = np.array([info.min, -1 if info.min else 1, 0, info.max], dtype=dtype)
    elif element_type == "f8e8m0fnu":  # powers of two only, no sign
        expected = np.array([0.25, 1.0, 2.0, 1024.0], dtype=dtype)
    else:
        expected = np.array([-2.5, -0.0, 0.5, 3.0], dtype=dtype)
    proto = literal(element_type, (2, 2))
    # 16-bit values go little-endian whatever the machine's byte order.
    wire = expected.view(f"<u{np.dtype(dtype).itemsize}") if np.dtype(dtype).itemsize > 1 \
        else expected.view(np.uint8)
    setattr(proto, field, wire.astype(wire.dtype.newbyteorder("<")).tobytes())
    value = literal_from_proto(proto)
    assert value.dtype == np.dtype(dtype) and value.shape == (2, 2)
    assert value.tobytes() == expected.reshape(2, 2).tobytes()


def test_complex() -> None:
    expected = np.array([[1 + 2j, -3.5 - 0j], [np.inf + 1j, 0 - 4j]])
    for element_type, field, dtype in (("c64", "c64s", np.complex64),
                                       ("c128", "c128s", np.complex128)):
        proto = literal(element_type, (2, 2))
        getattr(proto, field).extend(np.asarray(expected, dtype=dtype).view(
            np.float32 if dtype == np.complex64 else np.float64).reshape(-1).tolist())
        value = literal_from_proto(proto)
        assert value.dtype == dtype
        assert np.array_equal(value, expected.astype(dtype))


@pytest.mark.parametrize(("element_type", "bits", "dtype", "values"), [
    ("s4", 4, ml_dtypes.int4, [-8, -1, 0, 7, 3]),
    ("u4", 4, ml_dtypes.uint4, [0, 15, 1, 8, 9]),
    ("s2", 2, ml_dtypes.int2, [-2, -1, 0, 1, 1]),
    ("u2", 2, ml_dtypes.uint2, [0, 3, 1, 2, 2]),
    ("s1", 1, ml_dtypes.int1, [-1, 0, -1, 0, 0]),
    ("u1", 1, ml_dtypes.uint1, [1, 0, 1, 1, 0]),
])
def test_sub_byte_integers_unpacked_and_packed(element_type: str, bits: int, dtype: type,
                                               values: list[int]) -> None:
    field = f"{element_type}s"
    mask = (1 << bits) - 1
    # XLA's literals keep one value per byte...
    proto = literal(element_type, (5,))
    setattr(proto, field, bytes(v & mask for v in values))
    value = literal_from_proto(proto)
    assert value.dtype == np.dtype(dtype)
    assert value.astype(np.int64).tolist() == values
    # ...and packed data puts the first element in the most significant bits.
    per_byte = 8 // bits
    packed = bytearray()
    for start in range(0, len(values), per_byte):
        byte = 0
        for j, v in enumerate(values[start:start + per_byte]):
            byte |= (v & mask) << (bits * (per_byte - 1 - j))
        packed.append(byte)
    proto = literal(element_type, (5,))
    proto.shape.layout.element_size_in_bits = bits
    setattr(proto, field, bytes(packed))
    assert literal_from_proto(proto).astype(np.int64).tolist() == values


def test_f4e2m1fn() -> None:
    expected = np.array([-6.0, -0.5, 0.0, 1.5, 4.0], dtype=ml_dtypes.float4_e2m1fn)
    proto = literal("f4e2m1fn", (5,))
    proto.f4e2m1fns = bytes(int(b) & 0xF for b in expected.view(np.uint8))
    value = literal_from_proto(proto)
    assert value.dtype == ml_dtypes.float4_e2m1fn
    assert value.astype(np.float32).tolist() == expected.astype(np.float32).tolist()


@pytest.mark.parametrize("layout", [(0, 1), (1, 0)])
def test_rank_two_layouts(layout: tuple[int, int]) -> None:
    expected = np.arange(6, dtype=np.float32).reshape(2, 3)
    proto = literal("f32", (2, 3), layout)
    proto.f32s.extend(physical(expected, layout).tolist())
    value = literal_from_proto(proto)
    assert np.array_equal(value, expected)
    assert value.flags["C_CONTIGUOUS"]


@pytest.mark.parametrize("layout", [(0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1)])
def test_rank_three_layouts(layout: tuple[int, int, int]) -> None:
    expected = (np.arange(24, dtype=np.int32) * 5).reshape(2, 3, 4)
    proto = literal("s32", (2, 3, 4), layout)
    proto.s32s.extend(physical(expected, layout).tolist())
    assert np.array_equal(literal_from_proto(proto), expected)


def test_layout_on_byte_types() -> None:
    expected = np.arange(6, dtype=np.float16).reshape(3, 2) / 4
    proto = literal("f16", (3, 2), (0, 1))
    proto.f16s = physical(expected, (0, 1)).astype("<f2").tobytes()
    assert np.array_equal(literal_from_proto(proto), expected)


def test_nested_tuple() -> None:
    outer = xla_data_pb2.LiteralProto()
    outer.shape.element_type = PT.TUPLE
    first = literal("s32", ())
    first.s32s.append(7)
    inner = xla_data_pb2.LiteralProto()
    inner.shape.element_type = PT.TUPLE
    second = literal("pred", (2,))
    second.preds.extend([True, False])
    inner.tuple_literals.append(second)
    inner.shape.tuple_shapes.append(second.shape)
    outer.tuple_literals.extend([first, inner])
    outer.shape.tuple_shapes.extend([first.shape, inner.shape])
    value = literal_from_proto(outer)
    assert isinstance(value, tuple) and len(value) == 2
    assert value[0].shape == () and value[0] == 7
    assert isinstance(value[1], tuple) and value[1][0].tolist() == [True, False]


def test_zero_sized_and_scalar() -> None:
    empty = literal("f32", (0, 4))
    assert literal_from_proto(empty).shape == (0, 4)
    scalar = literal("f64", ())
    scalar.f64s.append(-0.0)
    value = literal_from_proto(scalar)
    assert value.shape == () and np.signbit(value)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: literal("token", ()), "token literal has no numpy representation"),
    (lambda: literal("opaque_type", ()), "opaque literal has no numpy representation"),
    (lambda: _with(literal("f32", (2, 2)), "f32s", [1.0, 2.0, 3.0]),
     "f32 literal has 3 values, its shape needs 4"),
    (lambda: _set(literal("bf16", (3,)), "bf16s", b"\x00\x01\x02"),
     "bf16 literal has 3 bytes, not a multiple of 2"),
    (lambda: _set(literal("s8", (3,)), "s8s", b"\x00"), "s8 literal has 1 values"),
    (lambda: _with(literal("c64", (1,)), "c64s", [1.0]), "c64 literal"),
    (lambda: _set(literal("s4", (5,)), "s4s", b"\x00\x00"), "s4 literal has 2 bytes for 5"),
    (lambda: _with(literal("f32", (2, 3), (0, 0)), "f32s", [0.0] * 6),
     "not a permutation"),
])
def test_errors_name_the_type(build, message: str) -> None:
    with pytest.raises(LiteralError, match=message):
        literal_from_proto(build())


def _with(proto: xla_data_pb2.LiteralProto, field: str, values: list) -> object:
    getattr(proto, field).extend(values)
    return proto


def _set(proto: xla_data_pb2.LiteralProto, field: str, data: bytes) -> object:
    setattr(proto, field, data)
    return proto


def test_shape_from_proto_dynamic_and_tuple() -> None:
    shape = xla_data_pb2.ShapeProto(element_type=PT.F32, dimensions=[4, -(2**63)],
                                    is_dynamic_dimension=[True, True])
    converted = shape_from_proto(shape)
    assert converted.dims == (4, -1) and converted.dynamic == (True, True)
    assert str(converted) == "f32[<=4,?]"
    pair = xla_data_pb2.ShapeProto(element_type=PT.TUPLE, tuple_shapes=[
        xla_data_pb2.ShapeProto(element_type=PT.TOKEN), shape])
    assert str(shape_from_proto(pair)) == "(token[], f32[<=4,?])"

"""s4/u4/s2/u2: arithmetic wraps at the type's width, width-dependent ops see the type's own
bits, results come back as ml_dtypes arrays (every value here is what XLA's CPU backend
gives for the same op; an exhaustive comparison over all operand pairs agreed)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, computation, run, scalar_computation
from workbench.hlo_ir import DotDimensionNumbers, Instruction, Shape
from workbench.replay.errors import Unsupported

s4 = ml_dtypes.int4
u4 = ml_dtypes.uint4
s2 = ml_dtypes.int2


def a(values: list, dtype: type) -> np.ndarray:
    return np.array(values, dtype)


@pytest.mark.parametrize(("opcode", "type_name", "dtype", "lhs", "rhs", "expected"), [
    ("add", "s4", s4, [7, -8, 3], [1, -1, 2], [-8, 7, 5]),
    ("add", "u4", u4, [15, 9], [1, 8], [0, 1]),
    ("multiply", "s4", s4, [4, 3, -8], [4, 3, -1], [0, -7, -8]),
    ("subtract", "u4", u4, [0], [1], [15]),
    ("divide", "s4", s4, [-8, 7, 7], [-1, 0, -2], [-8, -1, -3]),
    ("divide", "u4", u4, [5], [0], [15]),
    ("remainder", "s4", s4, [-7, 7], [2, 0], [-1, 7]),
    ("shift-left", "s4", s4, [1, 3, 1], [3, 2, 4], [-8, -4, 0]),
    ("shift-right-logical", "s4", s4, [-8, -1, -1], [1, 3, 4], [4, 1, 0]),
    ("shift-right-arithmetic", "u4", u4, [8, 15, 7], [1, 4, 1], [12, 15, 3]),
    ("shift-right-arithmetic", "s4", s4, [-8, 7], [5, 9], [-1, 0]),
    ("add", "s2", s2, [1, -2], [1, -1], [-2, 1]),
])
def test_binary_ops_wrap_at_the_width(opcode: str, type_name: str, dtype: type, lhs: list,
                                      rhs: list, expected: list) -> None:
    assert_same(run(opcode, type_name, a(lhs, dtype), a(rhs, dtype)), a(expected, dtype))


@pytest.mark.parametrize(("opcode", "type_name", "dtype", "operand", "expected"), [
    ("count-leading-zeros", "s4", s4, [1, 0, -1, 4], [3, 4, 0, 1]),
    ("count-leading-zeros", "u4", u4, [1, 15], [3, 0]),
    ("popcnt", "u4", u4, [15, 8, 0], [4, 1, 0]),
    ("negate", "s4", s4, [-8, 3], [-8, -3]),
    ("abs", "s4", s4, [-8, -3], [-8, 3]),
    ("not", "u4", u4, [0, 10], [15, 5]),
    ("not", "s4", s4, [0, -8], [-1, 7]),
])
def test_unary_ops_see_the_types_own_bits(opcode: str, type_name: str, dtype: type,
                                          operand: list, expected: list) -> None:
    assert_same(run(opcode, type_name, a(operand, dtype)), a(expected, dtype))


def test_popcnt_of_signed_sub_byte_values_is_unsupported() -> None:
    # XLA's CPU backend counts s4 over a byte (popcnt(-8) = 5) but s2 over its two bits
    with pytest.raises(Unsupported, match="^unsupported: popcnt on s4$"):
        run("popcnt", "s4", a([-8], s4))


def test_conversions() -> None:
    floats = np.array([100, -100, np.nan, 3.7, -3.7, 7.9, -8.5], np.float32)
    assert_same(run("convert", Shape("s4", (7,)), floats), a([7, -8, 0, 3, -3, 7, -8], s4))
    assert_same(run("convert", Shape("u4", (3,)), np.array([-1.5, 20, 15.9], np.float32)),
                a([0, 15, 15], u4))
    ints = np.array([17, -9, 8, -300], np.int32)  # integer narrowing keeps the low bits
    assert_same(run("convert", Shape("s4", (4,)), ints), a([1, 7, -8, 4], s4))
    assert_same(run("convert", Shape("u4", (2,)), a([-1, -8], s4)), a([15, 8], u4))
    assert_same(run("convert", Shape("f32", (2,)), a([-8, 7], s4)),
                np.array([-8, 7], np.float32))
    assert_same(run("bitcast-convert", Shape("s4", (2,)), a([15, 8], u4)), a([-1, -8], s4))


def test_iota_and_constants_wrap() -> None:
    assert_same(run("iota", Shape("s4", (10,)), dimensions=(0,)),
                a([0, 1, 2, 3, 4, 5, 6, 7, -8, -7], s4))
    assert_same(run("constant", Shape("u4", (2,)), literal=a([3, 15], u4)), a([3, 15], u4))


def test_reduce_and_dot_wrap() -> None:
    x = a([7, 7, 7], s4)
    reducer = scalar_computation("r", "add", "s4")
    assert_same(run("reduce", Shape("s4"), x, a(0, s4), dimensions=(0,),
                    called_computations=["r"], computations=(reducer,)), a(5, s4))  # 21 - 16
    lhs = a([[3, 3]], s4)
    rhs = a([[3], [3]], s4)
    assert_same(run("dot", Shape("s4", (1, 1)), lhs, rhs,
                    dot_dimension_numbers=DotDimensionNumbers((1,), (0,))), a([[2]], s4))  # 18 - 16


def test_tuples_of_sub_byte_values_cross_calls() -> None:
    """A while loop carrying an s4 counter: parameters, tuples and the result stay in range."""
    state = Shape("tuple", tuple_shapes=(Shape("s4"),))
    body = computation("body", [
        Instruction("p", "parameter", state, parameter_number=0),
        Instruction("i", "get-tuple-element", Shape("s4"), ["p"], tuple_index=0),
        Instruction("one", "constant", Shape("s4"), literal=a(3, s4)),
        Instruction("n", "add", Shape("s4"), ["i", "one"]),
        Instruction("t", "tuple", state, ["n"]),
    ])
    condition = computation("condition", [
        Instruction("p", "parameter", state, parameter_number=0),
        Instruction("i", "get-tuple-element", Shape("s4"), ["p"], tuple_index=0),
        Instruction("zero", "constant", Shape("s4"), literal=a(0, s4)),
        Instruction("c", "compare", Shape("pred"), ["i", "zero"], comparison_direction="GE"),
    ])
    # 0, 3, 6, then 9 wraps to -7 and the loop stops
    result = run("while", state, (a(0, s4),), called_computations=["body", "condition"],
                 computations=(body, condition))
    assert_same(result[0], a(-7, s4))


def test_width_changing_bitcast_convert_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="^unsupported: bitcast-convert with sub-byte types$"):
        run("bitcast-convert", Shape("s4", (2, 2)), np.array([1, 2], np.int8))

"""Data-movement ops, layouts and constants."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.hlo_builders import array_shape, assert_same, run
from workbench.hlo_ir import (
    Computation,
    HloModule,
    Instruction,
    PaddingDimension,
    Shape,
    SliceDimension,
)
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import evaluate_module

x23 = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_broadcast_maps_operand_dimensions() -> None:
    row = np.array([1, 2, 3], np.int32)
    assert_same(run("broadcast", array_shape("s32", 2, 3), row, dimensions=(1,)),
                np.array([[1, 2, 3], [1, 2, 3]], np.int32))
    assert_same(run("broadcast", array_shape("s32", 3, 2), row, dimensions=(0,)),
                np.array([[1, 1], [2, 2], [3, 3]], np.int32))
    # Unsorted dimensions transpose the operand.
    assert_same(run("broadcast", array_shape("f32", 3, 4, 2), x23, dimensions=(2, 0)),
                np.broadcast_to(x23.T[:, None, :], (3, 4, 2)))
    assert_same(run("broadcast", array_shape("f32", 2), np.float32(-0.0), dimensions=()),
                np.array([-0.0, -0.0], np.float32))


def test_reshape_transpose_reverse_slice_concatenate() -> None:
    assert_same(run("reshape", array_shape("f32", 3, 2), x23), x23.reshape(3, 2))
    assert_same(run("transpose", array_shape("f32", 3, 2), x23, dimensions=(1, 0)), x23.T)
    assert_same(run("reverse", array_shape("f32", 2, 3), x23, dimensions=(1,)), x23[:, ::-1])
    assert_same(run("slice", array_shape("f32", 1, 2), x23,
                    slice=(SliceDimension(1, 2), SliceDimension(0, 3, 2))), x23[1:2, 0:3:2])
    assert_same(run("concatenate", array_shape("f32", 2, 6), x23, x23 + 6, dimensions=(1,)),
                np.concatenate([x23, x23 + 6], axis=1))


def test_pad_edges_interior_and_negative() -> None:
    row = np.array([1, 2, 3], np.int32)
    config = (PaddingDimension(1, 2, 1),)
    assert_same(run("pad", array_shape("s32", 8), row, np.int32(0), padding_config=config),
                np.array([0, 1, 0, 2, 0, 3, 0, 0], np.int32))
    # Negative edges cut after interior padding: [1,9,2,9,3] -> drop 2 left, 1 right.
    config = (PaddingDimension(-2, -1, 1),)
    assert_same(run("pad", array_shape("s32", 2), row, np.int32(9), padding_config=config),
                np.array([2, 9], np.int32))


def test_iota_and_constant() -> None:
    shape = array_shape("f32", 2, 3)
    iota = Instruction("i", "iota", shape, dimensions=(1,))
    module = HloModule("m", [Computation("e", [iota], "i", is_entry=True)], "e")
    assert_same(evaluate_module(module, []), np.array([[0, 1, 2], [0, 1, 2]], np.float32))
    elided = Instruction("c", "constant", shape, literal_elided=True)
    module = HloModule("m", [Computation("e", [elided], "c", is_entry=True)], "e")
    with pytest.raises(Unsupported, match="unsupported: elided constant"):
        evaluate_module(module, [])


@pytest.mark.parametrize(("start", "expected"), [(0, [0, 1]), (2, [2, 3]), (3, [2, 3]),
                                                 (-5, [0, 1])])
def test_dynamic_slice_clamps_start(start: int, expected: list) -> None:
    values = np.arange(4, dtype=np.int32)
    assert_same(run("dynamic-slice", array_shape("s32", 2), values, np.int32(start),
                    dynamic_slice_sizes=(2,)), np.array(expected, np.int32))


def test_dynamic_update_slice_clamps_and_copies() -> None:
    values = np.zeros(4, np.float32)
    result = run("dynamic-update-slice", "f32", values, np.array([7, 8], np.float32),
                 np.uint32(3))
    assert_same(result, np.array([0, 0, 7, 8], np.float32))
    assert not values.any()


def test_bitcast_reinterprets_the_physical_layout() -> None:
    # f32[2,3]{0,1} is stored column-major: physical order 0,3,1,4,2,5.
    source = Shape("f32", (2, 3), layout=(0, 1))
    parameter = Instruction("p", "parameter", source, parameter_number=0)
    cast = Instruction("b", "bitcast", Shape("f32", (6,), layout=(0,)), ["p"])
    module = HloModule("m", [Computation("e", [parameter, cast], "b", is_entry=True)], "e")
    assert_same(evaluate_module(module, [x23]), np.array([0, 3, 1, 4, 2, 5], np.float32))
    # A column-major [2,3] is a row-major [3,2] transpose: the bitcast a transpose becomes.
    cast = Instruction("b", "bitcast", Shape("f32", (3, 2), layout=(1, 0)), ["p"])
    module = HloModule("m", [Computation("e", [parameter, cast], "b", is_entry=True)], "e")
    assert_same(evaluate_module(module, [x23]), x23.T)
    # Same width, other type: the bits are kept.
    cast = Instruction("b", "bitcast", Shape("s32", (2, 3), layout=(0, 1)), ["p"])
    module = HloModule("m", [Computation("e", [parameter, cast], "b", is_entry=True)], "e")
    assert_same(evaluate_module(module, [x23]), x23.view(np.int32))


def test_copy_keeps_logical_values_whatever_the_layout() -> None:
    result = run("copy", Shape("f32", (2, 3), layout=(0, 1)), x23)
    assert_same(result, x23)


def test_tuple_and_get_tuple_element() -> None:
    parameter = Instruction("p", "parameter", Shape("f32", (2, 3)), parameter_number=0)
    pair = Instruction("t", "tuple", Shape("tuple", tuple_shapes=(parameter.shape,) * 2),
                       ["p", "p"])
    second = Instruction("g", "get-tuple-element", parameter.shape, ["t"], tuple_index=1)
    module = HloModule("m", [Computation("e", [parameter, pair, second], "g", is_entry=True)],
                       "e")
    assert_same(evaluate_module(module, [x23]), x23)


def test_wrong_argument_is_an_evaluation_error() -> None:
    parameter = Instruction("p", "parameter", Shape("f32", (2, 2)), parameter_number=0)
    module = HloModule("m", [Computation("e", [parameter], "p", is_entry=True)], "e")
    with pytest.raises(EvaluationError, match=r"argument 0: expected f32\[2,2\]"):
        evaluate_module(module, [x23])
    with pytest.raises(EvaluationError, match="takes 1 arguments, got 0"):
        evaluate_module(module, [])


def test_set_dimension_size_to_the_static_size() -> None:
    x = np.arange(5, dtype=np.float32)
    dynamic = Shape("f32", (5,), dynamic=(True,))
    assert_same(run("set-dimension-size", dynamic, x, np.int32(5), dimensions=(0,)), x)
    with pytest.raises(Unsupported, match="^unsupported: set-dimension-size below the static"):
        run("set-dimension-size", dynamic, x, np.int32(3), dimensions=(0,))
    assert_same(run("get-dimension-size", Shape("s32"), np.zeros((2, 7), np.float32),
                    dimensions=(1,)), np.int32(7))

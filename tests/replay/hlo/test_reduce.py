"""reduce: recognized reducers in HloEvaluator's order, and any reducer computation."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.hlo_builders import (
    array_shape,
    assert_same,
    computation,
    run,
    scalar_computation,
)
from workbench.hlo_ir import HloModule, Instruction, Shape
from workbench.replay.hlo import evaluate_module

NAN = np.nan


def reduce(x: np.ndarray, init: object, dims: tuple[int, ...], opcode: str,
           out: Shape) -> np.ndarray:
    type_name = out.element_type
    return run("reduce", out, x, init, dimensions=dims, called_computations=["r"],
               computations=(scalar_computation("r", opcode, type_name),))


def test_float_sum_is_sequential_from_init() -> None:
    # ((0 + 1e8) + 1) + ... : every +1 is lost in f32; pairwise summation would keep them.
    x = np.array([1e8] + [1.0] * 8 + [-1e8], np.float32)
    assert_same(reduce(x, np.float32(0), (0,), "add", Shape("f32")), np.float32(0))
    # init takes part: -0.0 + -0.0 stays -0.0, +0.0 + -0.0 is +0.0.
    negative_zeros = np.array([-0.0, -0.0], np.float32)
    assert_same(reduce(negative_zeros, np.float32(-0.0), (0,), "add", Shape("f32")),
                np.float32(-0.0))
    assert_same(reduce(negative_zeros, np.float32(0.0), (0,), "add", Shape("f32")),
                np.float32(0.0))


def test_sum_over_several_dimensions_in_row_major_order() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_same(reduce(x, np.float32(0), (0, 2), "add", array_shape("f32", 3)),
                x.sum(axis=(0, 2)))
    assert_same(reduce(x, np.float32(1), (1,), "multiply", array_shape("f32", 2, 4)),
                x.prod(axis=1))


def _sum_all(x: np.ndarray, layout: tuple[int, ...], dimensions: tuple[int, ...]) -> object:
    """sum(x) over both dims of a 2-D parameter laid out as `layout` (minor_to_major)."""
    entry = computation("entry", [
        Instruction("p", "parameter", Shape("f32", x.shape, layout=layout), parameter_number=0),
        Instruction("zero", "constant", Shape("f32"), literal=np.float32(0)),
        Instruction("s", "reduce", Shape("f32"), ["p", "zero"], dimensions=dimensions,
                    called_computations=["r"]),
    ])
    entry.is_entry = True
    module = HloModule("m", [scalar_computation("r", "add", "f32"), entry], "entry")
    return evaluate_module(module, [x])


def test_reduced_elements_come_in_the_operands_physical_order() -> None:
    """Row-major means ((1e8 + 1) - 1e8) + 1 = 1 (the first 1 is lost); column-major order
    (layout {0,1}) means ((1e8 - 1e8) + 1) + 1 = 2. The order `dimensions` lists does not
    matter (HloEvaluator and XLA's CPU loop over the layout's order)."""
    x = np.array([[1e8, 1], [-1e8, 1]], np.float32)
    for dimensions in ((0, 1), (1, 0)):
        assert_same(_sum_all(x, (1, 0), dimensions), np.float32(1))
        assert_same(_sum_all(x, (0, 1), dimensions), np.float32(2))


@pytest.mark.parametrize(("opcode", "values", "init", "expected"), [
    ("maximum", [1.0, NAN, 3.0], -np.inf, NAN),
    ("maximum", [-0.0, 0.0, -0.0], -np.inf, 0.0),
    ("maximum", [-0.0, -0.0], -np.inf, -0.0),
    ("minimum", [0.0, -0.0, 0.0], np.inf, -0.0),
    ("minimum", [2.0, 5.0], 1.0, 1.0),
])
def test_float_max_min(opcode: str, values: list, init: float, expected: float) -> None:
    result = reduce(np.array(values, np.float32), np.float32(init), (0,), opcode, Shape("f32"))
    assert_same(result, np.float32(expected))


def test_integer_and_pred_reductions_wrap() -> None:
    x = np.array([2**31 - 1, 1, 5], np.int32)
    assert_same(reduce(x, np.int32(0), (0,), "add", Shape("s32")), np.int32(-(2**31) + 5))
    small = np.array([100, 100], np.int8)
    assert_same(reduce(small, np.int8(0), (0,), "add", Shape("s8")), np.int8(-56))
    flags = np.array([[True, False], [True, True]])
    assert_same(reduce(flags, np.bool_(True), (1,), "and", array_shape("pred", 2)),
                np.array([False, True]))
    assert_same(reduce(flags, np.bool_(False), (0,), "or", array_shape("pred", 2)),
                np.array([True, True]))


def test_empty_reduction_gives_init() -> None:
    x = np.zeros((0, 3), np.float32)
    assert_same(reduce(x, np.float32(-np.inf), (0,), "maximum", array_shape("f32", 3)),
                np.full(3, -np.inf, np.float32))


def test_variadic_argmax_reducer_is_folded_in_order() -> None:
    """JAX's argmax: (value, index) pairs; ties keep the lower index, NaN wins."""
    f32, s32 = Shape("f32"), Shape("s32")
    pair = Shape("tuple", tuple_shapes=(f32, s32))
    body = computation("argmax", [
        Instruction("av", "parameter", f32, parameter_number=0),
        Instruction("ai", "parameter", s32, parameter_number=1),
        Instruction("bv", "parameter", f32, parameter_number=2),
        Instruction("bi", "parameter", s32, parameter_number=3),
        Instruction("gt", "compare", Shape("pred"), ["av", "bv"], comparison_direction="GT"),
        Instruction("nan", "compare", Shape("pred"), ["av", "av"], comparison_direction="NE"),
        Instruction("eq", "compare", Shape("pred"), ["av", "bv"], comparison_direction="EQ"),
        Instruction("lt", "compare", Shape("pred"), ["ai", "bi"], comparison_direction="LT"),
        Instruction("tie", "and", Shape("pred"), ["eq", "lt"]),
        Instruction("keep0", "or", Shape("pred"), ["gt", "nan"]),
        Instruction("keep", "or", Shape("pred"), ["keep0", "tie"]),
        Instruction("v", "select", f32, ["keep", "av", "bv"]),
        Instruction("i", "select", s32, ["keep", "ai", "bi"]),
        Instruction("t", "tuple", pair, ["v", "i"]),
    ])
    values = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, NAN, 5.0, 5.0]], np.float32)
    indices = np.broadcast_to(np.arange(4, dtype=np.int32), (2, 4)).copy()
    out = Shape("tuple", tuple_shapes=(array_shape("f32", 2), array_shape("s32", 2)))
    result = run("reduce", out, values, indices, np.float32(-np.inf), np.int32(0),
                 dimensions=(1,), called_computations=["argmax"], computations=(body,))
    assert_same(result[0], np.array([3.0, NAN], np.float32))
    assert_same(result[1], np.array([1, 1], np.int32))


def _sum_first_two(x: np.ndarray, layout: tuple[int, ...], type_name: str) -> object:
    """sum over dims 0 and 1 of a 3-D parameter laid out as `layout` (minor_to_major)."""
    entry = computation("entry", [
        Instruction("p", "parameter", Shape(type_name, x.shape, layout=layout),
                    parameter_number=0),
        Instruction("zero", "constant", Shape(type_name), literal=np.zeros((), x.dtype)),
        Instruction("s", "reduce", array_shape(type_name, x.shape[2]), ["p", "zero"],
                    dimensions=(0, 1), called_computations=["r"]),
    ])
    entry.is_entry = True
    module = HloModule("m", [scalar_computation("r", "add", type_name), entry], "entry")
    return evaluate_module(module, [x])


@pytest.mark.parametrize("kept", [3, 300, 1000])
def test_many_outputs_sum_in_order_too(kept: int) -> None:
    """With many outputs the sums take one reduced element of every output at a time
    (`ROW_AT_A_TIME`): still in the operand's physical order, rounding after each element,
    in f32 and in bf16 (whose 256 + 1 rounds back to 256)."""
    import ml_dtypes

    for dtype, type_name, big in ((np.float32, "f32", 1e8),
                                  (ml_dtypes.bfloat16, "bf16", 256.0)):
        block = np.array([[big, 1], [-big, 1]], dtype)
        x = np.repeat(block[:, :, None], kept, axis=2)
        assert_same(_sum_first_two(x, (2, 1, 0), type_name), np.ones(kept, dtype))
        assert_same(_sum_first_two(x, (2, 0, 1), type_name), np.full(kept, 2, dtype))
        multiply = reduce(np.full((4, kept), 3, dtype), np.ones((), dtype), (0,), "multiply",
                          array_shape(type_name, kept))
        assert_same(multiply, np.full(kept, 81, dtype))

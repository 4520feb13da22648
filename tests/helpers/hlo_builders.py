"""Build small HLO modules from hlo_ir objects, and the one entry point the op tests use."""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.hlo_ir import ARRAY_TYPES, Computation, HloModule, Instruction, Shape, numpy_dtype
from workbench.replay.hlo import evaluate_module


def element_type(dtype: np.dtype) -> str:
    for name in ARRAY_TYPES:
        try:
            if np.dtype(numpy_dtype(name)) == dtype:
                return name
        except ValueError:
            continue
    raise ValueError(f"no HLO element type for {dtype}")


def shape_of(value: Any) -> Shape:
    if isinstance(value, tuple):
        return Shape("tuple", tuple_shapes=tuple(shape_of(v) for v in value))
    array = np.asarray(value)
    return Shape(element_type(array.dtype), tuple(array.shape))


def array_shape(type_name: str, *dims: int, layout: tuple[int, ...] | None = None) -> Shape:
    return Shape(type_name, tuple(dims), layout=layout)


def scalar_computation(name: str, opcode: str, type_name: str, **fields: Any) -> Computation:
    """`opcode(parameter 0, parameter 1)` on scalars of `type_name` (a reducer)."""
    scalar = Shape(type_name)
    result = Shape("pred") if opcode == "compare" else scalar
    return Computation(name, [
        Instruction("a", "parameter", scalar, parameter_number=0),
        Instruction("b", "parameter", scalar, parameter_number=1),
        Instruction("r", opcode, result, ["a", "b"], **fields),
    ], "r")


def computation(name: str, instructions: list[Instruction]) -> Computation:
    return Computation(name, instructions, instructions[-1].name)


def run(opcode: str, result: Shape | str, *operands: Any,
        computations: tuple[Computation, ...] = (), **fields: Any) -> Any:
    """Evaluate one instruction `opcode` whose operands are parameters holding `operands`.

    `result` is a Shape, or an element type name for a result shaped like operand 0.
    """
    if isinstance(result, str):
        result = Shape(result, tuple(np.shape(operands[0])))
    parameters = [
        Instruction(f"p{i}", "parameter", shape_of(v), parameter_number=i)
        for i, v in enumerate(operands)
    ]
    op = Instruction("op", opcode, result, [p.name for p in parameters], **fields)
    entry = Computation("entry", [*parameters, op], "op", is_entry=True)
    module = HloModule("m", [*computations, entry], "entry")
    return evaluate_module(module, list(operands))


def bits(value: Any) -> Any:
    """Bit patterns, so -0.0 vs +0.0 and NaN positions are compared too."""
    array = np.asarray(value)
    if array.dtype.kind in "fcV" and array.dtype != np.bool_:
        return np.ascontiguousarray(array).view(np.dtype(f"u{array.dtype.itemsize}"))
    return array


def assert_same(actual: Any, expected: Any) -> None:
    """Equal dtype, shape and bits (NaN payloads of computed NaNs are not compared)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype.kind == "c":
        assert_same(actual.real.copy(), expected.real.copy())
        assert_same(actual.imag.copy(), expected.imag.copy())
        return
    if actual.dtype.kind in "fV" and actual.dtype.itemsize <= 8:
        wide = actual.astype(np.float64)
        expected_wide = expected.astype(np.float64)
        nan = np.isnan(expected_wide)
        assert np.array_equal(np.isnan(wide), nan), (actual, expected)
        assert np.array_equal(bits(actual)[~nan], bits(expected)[~nan]), (actual, expected)
        return
    assert np.array_equal(actual, expected), (actual, expected)

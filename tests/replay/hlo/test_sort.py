"""sort with JAX's comparators, several operands, descending and arbitrary comparators."""

from __future__ import annotations

import numpy as np

from tests.helpers.hlo_builders import assert_same, computation, run, scalar_computation
from workbench.hlo_ir import Instruction, Shape

NAN = np.nan


def jax_float_comparator(name: str, type_name: str, extra_operands: int = 0) -> object:
    """What JAX emits: NaN -> NaN, -0.0 -> 0.0 on both sides, then LT TOTALORDER."""
    scalar = Shape(type_name)
    instructions = []
    for side, number in (("l", 0), ("r", 1)):
        instructions += [
            Instruction(f"{side}", "parameter", scalar, parameter_number=number),
            Instruction(f"{side}nan", "compare", Shape("pred"), [side, side],
                        comparison_direction="NE"),
            Instruction(f"{side}zero", "compare", Shape("pred"), [side, "zero"],
                        comparison_direction="EQ"),
            Instruction(f"{side}z", "select", scalar, [f"{side}zero", "zero", side]),
            Instruction(f"{side}k", "select", scalar, [f"{side}nan", "nan", f"{side}z"]),
        ]
    constants = [
        Instruction("zero", "constant", scalar, literal=np.zeros((), np.float32)),
        Instruction("nan", "constant", scalar, literal=np.array(NAN, np.float32)),
    ]
    extra = [Instruction(f"x{i}", "parameter", Shape("s32"), parameter_number=2 + i)
             for i in range(extra_operands)]
    root = Instruction("lt", "compare", Shape("pred"), ["lk", "rk"], comparison_direction="LT",
                       comparison_type="TOTALORDER")
    return computation(name, constants + instructions + extra + [root])


def test_jax_comparator_sorts_total_order_stably_with_payload() -> None:
    keys = np.array([3.0, NAN, -0.0, 0.0, -np.inf, 1.0, -0.0], np.float32)
    payload = np.arange(7, dtype=np.int32)
    out = Shape("tuple", tuple_shapes=(Shape("f32", (7,)), Shape("s32", (7,))))
    result = run("sort", out, keys, payload, dimensions=(0,), is_stable=True,
                 called_computations=["cmp"], computations=(jax_float_comparator("cmp", "f32", 2),))
    # -0.0 and 0.0 are canonicalized equal: stable order keeps 2, 3, 6.
    assert_same(result[1], np.array([4, 2, 3, 6, 5, 0, 1], np.int32))
    assert_same(result[0], keys[[4, 2, 3, 6, 5, 0, 1]])


def test_descending_integer_sort_along_an_axis() -> None:
    x = np.array([[3, 1, 2], [-1, 5, 5]], np.int32)
    result = run("sort", "s32", x, dimensions=(1,), called_computations=["gt"],
                 computations=(scalar_computation("gt", "compare", "s32",
                                                  comparison_direction="GT"),))
    assert_same(result, np.array([[3, 2, 1], [5, 5, -1]], np.int32))


def test_arbitrary_comparator_by_absolute_value() -> None:
    s32 = Shape("s32")
    by_abs = computation("by_abs", [
        Instruction("a", "parameter", s32, parameter_number=0),
        Instruction("b", "parameter", s32, parameter_number=1),
        Instruction("aa", "abs", s32, ["a"]),
        Instruction("ab", "abs", s32, ["b"]),
        Instruction("lt", "compare", Shape("pred"), ["aa", "ab"], comparison_direction="LT"),
        # Depends on both sides: not a plain key compare, so the pairwise path runs.
        Instruction("eq", "compare", Shape("pred"), ["aa", "ab"], comparison_direction="EQ"),
        Instruction("neg", "compare", Shape("pred"), ["a", "b"], comparison_direction="LT"),
        Instruction("tie", "and", Shape("pred"), ["eq", "neg"]),
        Instruction("r", "or", Shape("pred"), ["lt", "tie"]),
    ])
    x = np.array([3, -2, 2, -3, 0, 1], np.int32)
    result = run("sort", "s32", x, dimensions=(0,), called_computations=["by_abs"],
                 computations=(by_abs,))
    assert_same(result, np.array([0, 1, -2, 2, -3, 3], np.int32))


def test_topk_largest_first_ties_by_index() -> None:
    x = np.array([[1.0, 4.0, 4.0, -1.0]], np.float32)
    out = Shape("tuple", tuple_shapes=(Shape("f32", (1, 2)), Shape("s32", (1, 2))))
    values, indices = run("topk", out, x, k=2, largest=True)
    assert_same(values, np.array([[4.0, 4.0]], np.float32))
    assert_same(indices, np.array([[1, 2]], np.int32))

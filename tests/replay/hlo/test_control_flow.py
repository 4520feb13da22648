"""while, conditional, call/fusion, map, custom-calls, single-device collectives, and the
`unsupported: <opcode>` contract."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, computation, run, scalar_computation
from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module, supported_opcodes

S32 = Shape("s32")
F32 = Shape("f32")
STATE = Shape("tuple", tuple_shapes=(S32, F32))


def loop_module(limit: int) -> HloModule:
    """(i, x) -> while i < limit: (i + 1, x * 2)."""
    condition = computation("cond", [
        Instruction("s", "parameter", STATE, parameter_number=0),
        Instruction("i", "get-tuple-element", S32, ["s"], tuple_index=0),
        Instruction("n", "constant", S32, literal=np.array(limit, np.int32)),
        Instruction("lt", "compare", Shape("pred"), ["i", "n"], comparison_direction="LT"),
    ])
    body = computation("body", [
        Instruction("s", "parameter", STATE, parameter_number=0),
        Instruction("i", "get-tuple-element", S32, ["s"], tuple_index=0),
        Instruction("x", "get-tuple-element", F32, ["s"], tuple_index=1),
        Instruction("one", "constant", S32, literal=np.array(1, np.int32)),
        Instruction("two", "constant", F32, literal=np.array(2, np.float32)),
        Instruction("i1", "add", S32, ["i", "one"]),
        Instruction("x2", "multiply", F32, ["x", "two"]),
        Instruction("t", "tuple", STATE, ["i1", "x2"]),
    ])
    entry = Computation("entry", [
        Instruction("p", "parameter", STATE, parameter_number=0),
        Instruction("w", "while", STATE, ["p"], called_computations=["body", "cond"]),
    ], "w", is_entry=True)
    return HloModule("m", [condition, body, entry], "entry")


def test_while_with_tuple_state() -> None:
    result = evaluate_module(loop_module(5), [(np.int32(0), np.float32(1.5))])
    assert_same(result[0], np.int32(5))
    assert_same(result[1], np.float32(48))
    result = evaluate_module(loop_module(0), [(np.int32(3), np.float32(1.5))])
    assert_same(result[1], np.float32(1.5))


@pytest.mark.parametrize(("selector", "expected"), [
    (np.bool_(True), 10.0), (np.bool_(False), -10.0),
    (np.int32(0), 10.0), (np.int32(1), -10.0), (np.int32(7), -10.0), (np.int32(-1), -10.0),
])
def test_conditional_picks_branch(selector: np.ndarray, expected: float) -> None:
    def branch(name: str, opcode: str) -> Computation:
        return computation(name, [Instruction("x", "parameter", F32, parameter_number=0),
                                  Instruction("r", opcode, F32, ["x", "x"])])

    result = run("conditional", F32, selector, np.float32(5), np.float32(-5),
                 called_computations=["plus", "minus"],
                 computations=(branch("plus", "add"), branch("minus", "add")))
    assert_same(result, np.float32(expected))


def test_call_fusion_and_map() -> None:
    f32_3 = Shape("f32", (3,))
    double = computation("double", [Instruction("x", "parameter", f32_3, parameter_number=0),
                                    Instruction("r", "add", f32_3, ["x", "x"])])
    x = np.array([1, -0.0, 3], np.float32)
    for opcode in ("call", "fusion"):
        assert_same(run(opcode, "f32", x, called_computations=["double"],
                        computations=(double,)), np.array([2, -0.0, 6], np.float32))
    assert_same(run("map", "f32", x, x, called_computations=["max"], dimensions=(0,),
                    computations=(scalar_computation("max", "maximum", "f32"),)), x)


def test_annotation_custom_calls_are_identities_others_unsupported() -> None:
    x = np.arange(3, dtype=np.float32)
    for target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"):
        assert_same(run("custom-call", "f32", x, custom_call_target=target), x)
    with pytest.raises(Unsupported, match="unsupported: custom-call lapack_sgetrf"):
        run("custom-call", "f32", x, custom_call_target="lapack_sgetrf")


def test_single_device_collectives_and_ids() -> None:
    x = np.arange(3, dtype=np.float32)
    assert_same(run("all-reduce", "f32", x, attrs={"replica_groups": "{}"}), x)
    assert_same(run("all-gather", "f32", x, attrs={"replica_groups": "{{0}}"}), x)
    with pytest.raises(Unsupported, match="more than one device"):
        run("all-reduce", "f32", x, attrs={"replica_groups": "{{0,1}}"})
    assert_same(run("partition-id", Shape("u32")), np.uint32(0))


@pytest.mark.parametrize("opcode", ["rng", "infeed", "send", "outfeed",
                                    "no-such-op"])
def test_unimplemented_ops_are_reported_by_name(opcode: str) -> None:
    assert opcode not in supported_opcodes()
    with pytest.raises(Unsupported, match=f"^unsupported: {opcode}$"):
        run(opcode, "f32", np.zeros(2, np.float32))

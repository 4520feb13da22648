"""Ops that run other computations (call, fusion, while, conditional, map)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.deadline import check_loop
from workbench.replay.errors import EvaluationError
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


def _called(instruction: Instruction, count: int) -> list[str]:
    called = instruction.called_computations
    if len(called) < count:
        raise EvaluationError(
            f"{instruction.name}: {instruction.opcode} needs {count} called computations")
    return called


@handles("call", "fusion")
def call(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    # Every fusion kind (loop, input, output, custom) means its fused computation.
    return interpreter.call(_called(instruction, 1)[0], operands)


@handles("while")
def while_(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    body, condition = _called(instruction, 2)[:2]
    state = operands[0]
    name = _loop_name(instruction)
    iterations = 0
    while bool(np.asarray(interpreter.call(condition, [state]))):
        state = interpreter.call(body, [state])
        iterations += 1
        check_loop(name, iterations)
    return state


def _loop_name(instruction: Instruction) -> str:
    """`while.7 (jit(f)/while)`: the instruction and its op name, when it has one."""
    op_name = instruction.metadata.op_name if instruction.metadata else ""
    return f"{instruction.name} ({op_name})" if op_name else instruction.name


@handles("conditional")
def conditional(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    branches = instruction.called_computations
    selector = np.asarray(operands[0])
    if selector.dtype == np.bool_:
        if len(branches) != 2:
            raise EvaluationError(f"{instruction.name}: pred conditional needs 2 branches")
        index = 0 if bool(selector) else 1
    else:
        index = int(selector)
        if index < 0 or index >= len(branches):
            index = len(branches) - 1  # XLA runs the last branch for an out-of-range index
    return interpreter.call(branches[index], [operands[1 + index]])


@handles("map")
def map_(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    name = _called(instruction, 1)[0]
    result = interpreter.apply_scalar(name, operands)
    return np.broadcast_to(result, instruction.shape.dims)

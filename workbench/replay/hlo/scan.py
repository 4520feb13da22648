"""`scan`: the HLO op newer XLA keeps `jnp.cumsum` as (`scan(%x, %init), dimensions={1},
num_carries=1, is_associative=true, to_apply=%add`).

XLA's semantics (its `ScanExpander` lowers the op to this loop): the operands are the inputs
then the carries' initial values; step i applies `to_apply` to the inputs' slices at i along
the scan dimension and the carries, and gets back (outputs..., new carries...); the outputs'
slices are stacked along the scan dimension. The result is (outputs..., final carries...).
`is_reverse=true` walks the dimension from its end. The steps run in order, one call each:
an associative `to_apply` allows XLA to regroup them, which the judgment's bound for a
reassociated reduction covers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.dtypes import dtype_of
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

# Set by the proto reader when a scan carries proto fields it cannot name.
UNREAD_FIELDS = "unread_proto_fields"


def scan_carries(instruction: Instruction, inputs_and_inits: list[Shape],
                 parameters: list[Shape]) -> int:
    """How many operands are carries: an input has the scan dimension its `to_apply`
    parameter lacks, a carry has the parameter's shape. Checked against `num_carries` when
    the dump prints it."""
    if len(parameters) != len(inputs_and_inits):
        raise EvaluationError(f"{instruction.name}: scan with {len(inputs_and_inits)} operands "
                              f"but a to_apply of {len(parameters)} parameters")
    carries = 0
    for operand, parameter in zip(reversed(inputs_and_inits), reversed(parameters),
                                  strict=True):
        if operand.rank != parameter.rank:
            break
        carries += 1
    written = instruction.attrs.get("num_carries")
    if written is not None and written != str(carries):
        raise EvaluationError(f"{instruction.name}: num_carries={written}, but the operands' "
                              f"shapes give {carries}")
    return carries


@handles("scan")
def scan(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    if UNREAD_FIELDS in instruction.attrs:
        raise Unsupported(f"scan with proto fields {instruction.attrs[UNREAD_FIELDS]} "
                          "this reader does not know")
    if instruction.dimensions is None or len(instruction.dimensions) != 1 \
            or len(instruction.called_computations) != 1:
        raise EvaluationError(f"{instruction.name}: scan needs one dimension and to_apply")
    name = instruction.called_computations[0]
    computation = interpreter.computation(name)
    parameters = sorted((i for i in computation.instructions if i.opcode == "parameter"),
                        key=lambda i: i.parameter_number or 0)
    shapes = [interpreter.operand_shape(instruction, k) for k in range(len(operands))]
    carries = scan_carries(instruction, shapes, [p.shape for p in parameters])
    inputs = [np.asarray(x) for x in operands[: len(operands) - carries]]
    state = list(operands[len(operands) - carries :])
    if not inputs:
        raise EvaluationError(f"{instruction.name}: scan without inputs")
    axis = instruction.dimensions[0]
    length = inputs[0].shape[axis]
    result_shapes = instruction.shape.tuple_shapes if instruction.shape.is_tuple else \
        (instruction.shape,)
    output_count = len(result_shapes) - carries
    steps = range(length - 1, -1, -1) if instruction.attrs.get("is_reverse") == "true" \
        else range(length)
    slices: list[list[np.ndarray]] = [[] for _ in range(output_count)]
    for step in steps:
        arguments = [np.take(x, step, axis=axis) for x in inputs] + state
        returned = interpreter.call(name, arguments)
        values = list(returned) if isinstance(returned, tuple) else [returned]
        if len(values) != output_count + carries:
            raise EvaluationError(f"{instruction.name}: to_apply returns {len(values)} "
                                  f"values, not {output_count} outputs and {carries} carries")
        for k in range(output_count):
            slices[k].append(np.asarray(values[k]))
        state = values[output_count:]
    if instruction.attrs.get("is_reverse") == "true":
        for pieces in slices:
            pieces.reverse()
    outputs = [np.stack(pieces, axis=axis) if pieces else
               np.empty(shape.dims, dtype_of(shape.element_type))
               for pieces, shape in zip(slices, result_shapes, strict=False)]
    results = outputs + state
    return tuple(results) if instruction.shape.is_tuple else results[0]

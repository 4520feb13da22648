"""`custom-call`: dispatch on the target name.

- Annotations (sharding, host offloading, Shardy's `xla.sdy.*` markers) are the identity on
  one device: their results are their operands.
- jaxlib's LAPACK kernels (`lapack_{s,d,c,z}<routine>_ffi`): `lapack.py`, via SciPy.
- jaxlib's `tridiagonal_solve_perturbed_ffi`: `tridiagonal_solve.py`.
- XLA's own targets (`TopK`): `xla_internal_calls.py`.
- XLA GPU's cuDNN, cuBLAS and cuSOLVER calls: `gpu_calls.py`.

Any other target is `unsupported: custom-call <target>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import devices, gpu_calls, lapack
from workbench.replay.hlo.registry import Value, handles
from workbench.replay.hlo.tridiagonal_solve import tridiagonal_solve_perturbed
from workbench.replay.hlo.xla_internal_calls import XLA_INTERNAL_TARGETS

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

ANNOTATION_TARGETS = frozenset((
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
    "annotate_device_placement", "LayoutConstraint", "InspectSharding",
    # Shardy (`sdy`) round-tripped through HLO: result shardings, and a manual computation's
    # boundaries, which change shapes only when a mesh axis has more than one device.
    "xla.sdy.FuncResultSharding", "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape",
))


def _annotation(instruction: Instruction, operands: list[Value]) -> Value:
    shape = instruction.shape
    if shape.is_tuple and len(shape.tuple_shapes) == len(operands):
        values = tuple(operands)
        shapes = shape.tuple_shapes
    elif not shape.is_tuple and len(operands) == 1:
        values, shapes = (operands[0],), (shape,)
    else:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with "
                          f"{len(operands)} operands and result {shape}")
    for value, result in zip(values, shapes, strict=True):
        if isinstance(value, tuple) or np.shape(value) != result.dims:
            # A shape change means more than one device along a mesh axis
            raise Unsupported(f"custom-call {instruction.custom_call_target} "
                              "over more than one device")
    return operands[0] if not shape.is_tuple else values


def _manual_boundary(interpreter: Interpreter, instruction: Instruction,
                     operands: list[Value]) -> Value:
    """A manual region's entry (this device's shard) or exit (every device's joined)."""
    if len(operands) != 1 or instruction.shape.is_tuple:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with "
                          f"{len(operands)} operands and result {instruction.shape}")
    if instruction.custom_call_target in devices.MANUAL_EXIT:
        return devices.manual_exit(interpreter, instruction, operands[0])
    operand = interpreter.operand(instruction, 0)
    return devices.manual_entry(interpreter, instruction, operands[0], operand.sharding)


@handles("custom-call")
def custom_call(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    target = instruction.custom_call_target or ""
    boundary = target in devices.MANUAL_ENTRY | devices.MANUAL_EXIT
    if boundary and devices.device_of(interpreter).devices > 1:
        return _manual_boundary(interpreter, instruction, operands)
    if target in ANNOTATION_TARGETS:
        return _annotation(instruction, operands)
    if target in XLA_INTERNAL_TARGETS:
        return XLA_INTERNAL_TARGETS[target](interpreter, instruction, operands)
    if target.startswith("lapack_"):
        return lapack.evaluate(instruction, operands)
    if target in gpu_calls.GPU_CALLS:
        return gpu_calls.GPU_CALLS[target](interpreter, instruction, operands)
    if target == "tridiagonal_solve_perturbed_ffi":
        if len(operands) != 4:
            raise Unsupported(f"custom-call {target} with {len(operands)} operands")
        return tridiagonal_solve_perturbed(*(np.asarray(x) for x in operands))
    raise Unsupported(f"custom-call {target}" if target else "custom-call")

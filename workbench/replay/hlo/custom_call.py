"""`custom-call`: dispatch on the target name, each target registered where it is evaluated
(`registry.handles_custom_call`).

- Annotations (sharding, host offloading, Shardy's `xla.sdy.*` markers) are the identity on
  one device: their results are their operands. A manual region's boundaries
  (`xla.sdy.GlobalToLocalShape`, `SPMDFullToShardShape` and their inverses) shard and join
  values when the devices run apart (`spmd.py`); `xla.sdy.ShardingGroup` has no result.
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
from workbench.replay.hlo import (  # noqa: F401  (modules registering targets)
    gpu_calls,
    lapack,
    spmd,
    xla_internal_calls,
)
from workbench.replay.hlo.registry import (
    Value,
    custom_call_handler_for,
    handles,
    handles_custom_call,
)
from workbench.replay.hlo.tridiagonal_solve import tridiagonal_solve_perturbed

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

ANNOTATION_TARGETS = frozenset((
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
    "annotate_device_placement", "LayoutConstraint", "InspectSharding",
    # Shardy (`sdy`) round-tripped through HLO: result shardings, and a manual computation's
    # boundaries, which change shapes only when a mesh axis has more than one device.
    "xla.sdy.FuncResultSharding", "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape",
    "xla.sdy.PropagationBarrier",
))


def _annotation(_interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
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


handles_custom_call(*(ANNOTATION_TARGETS - spmd.MANUAL_ENTRY - spmd.MANUAL_EXIT))(_annotation)


@handles_custom_call(*spmd.MANUAL_ENTRY, *spmd.MANUAL_EXIT)
def _manual_boundary(interpreter: Interpreter, instruction: Instruction,
                     operands: list[Value]) -> Value:
    """On one device of a partitioned run, a manual region's entry (this device's shards) or
    exit (every device's joined); on one device alone, an annotation. Shardy's
    `xla.sdy.GlobalToLocalShape` / `LocalToGlobalShape` take a `shard_map`'s operands or
    results all at once (a tuple result); XLA's `SPMDFullToShardShape` /
    `SPMDShardToFullShape` one each."""
    if spmd.device_of(interpreter).devices == 1:
        return _annotation(interpreter, instruction, operands)
    shape = instruction.shape
    count = len(shape.tuple_shapes) if shape.is_tuple else 1
    if count != len(operands) or any(isinstance(operand, tuple) for operand in operands):
        raise Unsupported(f"custom-call {instruction.custom_call_target} with "
                          f"{len(operands)} operands and result {shape}")
    arrays = [np.asarray(operand) for operand in operands]
    if instruction.custom_call_target in spmd.MANUAL_EXIT:
        values = spmd.manual_exit(interpreter, instruction, arrays)
    else:
        shardings = [interpreter.operand(instruction, index).sharding
                     for index in range(len(operands))]
        values = spmd.manual_entry(interpreter, instruction, arrays, shardings)
    return tuple(values) if shape.is_tuple else values[0]


@handles_custom_call("xla.sdy.ShardingGroup")
def _sharding_group(_interpreter: Interpreter, instruction: Instruction,
                    operands: list[Value]) -> Value:
    """Shardy's hint that values shard alike: no result (an empty tuple), no effect."""
    if instruction.shape.is_tuple and not instruction.shape.tuple_shapes:
        return ()
    raise Unsupported(f"custom-call {instruction.custom_call_target} with result "
                      f"{instruction.shape}")


@handles_custom_call("tridiagonal_solve_perturbed_ffi")
def _tridiagonal_solve(_interpreter: Interpreter, instruction: Instruction,
                       operands: list[Value]) -> Value:
    if len(operands) != 4:
        raise Unsupported(f"custom-call {instruction.custom_call_target} with "
                          f"{len(operands)} operands")
    return tridiagonal_solve_perturbed(*(np.asarray(x) for x in operands))


@handles("custom-call", bit_exact=True)  # the shadow runs a call as it is: no f64 kernel
def custom_call(interpreter: Interpreter, instruction: Instruction,
                operands: list[Value]) -> Value:
    handler = custom_call_handler_for(instruction.custom_call_target or "")
    return handler(interpreter, instruction, operands)

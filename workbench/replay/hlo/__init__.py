"""A numpy evaluator of HLO modules, following XLA's operation semantics.

`evaluate_module(module, arguments)` runs the entry computation on snapshot arguments and
returns the result literal (an ndarray, or a tuple of them). An op, type or custom-call target
it does not implement raises `Unsupported` (`unsupported: <name>`); malformed IR raises
`EvaluationError`. It never guesses a value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, HloModule, LiteralValue, Shape
from workbench.replay.errors import EvaluationError
from workbench.replay.hlo import (  # noqa: F401  (each module registers its ops)
    batch_norm,
    collectives,
    control_flow,
    convolution,
    custom_call,
    dot,
    elementwise,
    fft,
    gather,
    linalg,
    mulhi,
    reduce,
    reduce_window,
    rng,
    scan,
    scatter,
    shape_ops,
    sort,
    stochastic_convert,
    sub_byte,
)
from workbench.replay.hlo.dtypes import dtype_of
from workbench.replay.hlo.float_environment import flush_subnormals as flush_subnormals_of
from workbench.replay.hlo.interpreter import Interpreter, Observer
from workbench.replay.hlo.registry import supported_opcodes

__all__ = ["evaluate_computation", "evaluate_module", "supported_opcodes"]


def _check_argument(shape: Shape, value: LiteralValue, where: str) -> None:
    if shape.is_tuple:
        if not isinstance(value, tuple) or len(value) != len(shape.tuple_shapes):
            raise EvaluationError(f"{where}: expected a tuple {shape}")
        for i, (sub_shape, sub_value) in enumerate(zip(shape.tuple_shapes, value, strict=True)):
            _check_argument(sub_shape, sub_value, f"{where}[{i}]")
        return
    if not shape.is_array:
        return
    if isinstance(value, tuple):
        raise EvaluationError(f"{where}: expected an array {shape}, got a tuple")
    array = np.asarray(value)
    if array.shape != shape.dims or array.dtype != dtype_of(shape.element_type):
        raise EvaluationError(
            f"{where}: expected {shape}, got {array.dtype}{list(array.shape)}")


def _materialize(value: object) -> Any:
    """Plain C-ordered arrays (no broadcast views or numpy scalars) in the result; None
    where an output was handed to the interpreter's `output_sink` (so not a `LiteralValue`
    then)."""
    if isinstance(value, tuple):
        return tuple(_materialize(v) for v in value)
    if value is None:
        return None
    if isinstance(value, np.memmap):  # an output moved to disk as it was made: plain already
        return value
    return np.array(value, copy=True, order="C")


def evaluate_computation(module: HloModule, computation: Computation,
                         arguments: Sequence[LiteralValue],
                         observer: Observer | None = None,
                         interpreter: Interpreter | None = None,
                         flush_subnormals: bool = False) -> LiteralValue:
    """Evaluate one computation of `module` on `arguments` (one per parameter); `observer`
    sees every intermediate value (see `interpreter.Observer`). `interpreter` (of `module`)
    reuses the plans an earlier evaluation compiled. `flush_subnormals`: as XLA CPU runs,
    every subnormal argument and result read as zero (`float_environment`)."""
    parameters = computation.parameters
    if len(arguments) != len(parameters):
        raise EvaluationError(
            f"{computation.name} takes {len(parameters)} arguments, got {len(arguments)}")
    arguments = [sub_byte.to_storage(argument, parameter.shape)
                 for parameter, argument in zip(parameters, arguments, strict=True)]
    for parameter, argument in zip(parameters, arguments, strict=True):
        _check_argument(parameter.shape, argument, f"argument {parameter.parameter_number}")
    if flush_subnormals:
        arguments = [flush_subnormals_of(argument) for argument in arguments]
    with np.errstate(all="ignore"):
        if interpreter is None:
            interpreter = Interpreter(module, flush_subnormals=flush_subnormals)
        elif interpreter.module is not module:
            raise ValueError("the interpreter is another module's")
        elif interpreter.flush_subnormals != flush_subnormals:
            raise ValueError("the interpreter runs in another floating-point environment")
        interpreter.observer = observer
        result = interpreter.call(computation.name, arguments)
    return _materialize(sub_byte.from_storage(result, computation.root.shape))


def evaluate_module(module: HloModule, arguments: Sequence[LiteralValue],
                    observer: Observer | None = None,
                    interpreter: Interpreter | None = None,
                    flush_subnormals: bool = False) -> LiteralValue:
    """Evaluate the entry computation of `module` on `arguments`."""
    return evaluate_computation(module, module.entry, arguments, observer, interpreter,
                                flush_subnormals)

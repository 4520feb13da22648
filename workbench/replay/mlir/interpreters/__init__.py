"""The one registry of op implementations the MLIR replay runs, one module per dialect.

Following xDSL's own layout (`xdsl/interpreters/<dialect>.py`), each module defines one
`InterpreterFunctions` class; `register_implementations` installs them all. xDSL's classes are
used as they are where their value model does not matter (func), and subclassed where ops are
added (scf, cf).
"""

from __future__ import annotations

from xdsl.dialects import arith as arith_dialect
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from workbench.replay.mlir.interpreters import (
    affine,
    arith,
    bufferization,
    cf,
    chlo,
    linalg,
    math,
    memref,
    scf,
    sdy,
    stablehlo,
    tensor,
)
from workbench.replay.mlir.interpreters.structured import ELEMENTWISE_OPS

FUNCTIONS = (
    affine.AffineFunctions,
    arith.ArithFunctions,
    bufferization.BufferizationFunctions,
    cf.ReplayCfFunctions,
    chlo.ChloFunctions,
    FuncFunctions,
    linalg.LinalgFunctions,
    linalg.ContractionFunctions,
    linalg.ElementwiseNamedFunctions,
    math.MathFunctions,
    memref.MemRefFunctions,
    scf.ReplayScfFunctions,
    sdy.SdyFunctions,
    stablehlo.StablehloFunctions,
    tensor.TensorFunctions,
)

# Bodies made only of these ops may run on whole arrays at once (see `structured`).
ELEMENTWISE_OPS.update(
    arith.TABLE, math.TABLE, (arith_dialect.ConstantOp,), stablehlo.ELEMENTWISE, chlo.TABLE
)


def register_implementations(interpreter: Interpreter) -> None:
    for functions in FUNCTIONS:
        interpreter.register_implementations(functions())

"""Run a printed MLIR module on numpy arguments: `evaluate_mlir`.

The module is parsed with xDSL (see `parse`), its entry function is checked for ops the replay
cannot run (so the answer is `unsupported: <op>` before any work is done), then interpreted by
xDSL's interpreter with the implementations in `interpreters`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from workbench.hlo_ir import LiteralValue
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.mlir.interpreter import ReplayInterpreter, op_name
from workbench.replay.mlir.interpreters import register_implementations
from workbench.replay.mlir.parse import parse_module
from workbench.replay.mlir.values import element_type, is_shaped, value_dtype


def evaluate_mlir(
    text: str, arguments: Sequence[np.ndarray], entry_point: str | None = None,
    observer: Callable[[Operation, int, Any], None] | None = None,
) -> LiteralValue:
    """The result of the module's entry function on `arguments`: one array, or a tuple.

    `entry_point` names the function (default: `main`, else the module's only function). A
    function that returns nothing gives the final contents of its memref arguments.
    Raises `Unsupported` for an op the replay cannot run, `EvaluationError` (and its
    `MlirParseError`) for IR that cannot be parsed or evaluated.
    """
    module, resources = parse_module(text)
    return evaluate_module(module, arguments, entry_point, resources, observer)


def evaluate_module(
    module: ModuleOp,
    arguments: Sequence[np.ndarray],
    entry_point: str | None = None,
    resources: dict[str, str] | None = None,
    observer: Callable[[Operation, int, Any], None] | None = None,
) -> LiteralValue:
    """`evaluate_mlir` on a parsed module; `observer` sees every op result as it is made."""
    function = entry_function(module, entry_point)
    interpreter = ReplayInterpreter(module, resources=resources or {}, observer=observer)
    register_implementations(interpreter)
    check_supported(interpreter, function)
    inputs = function.function_type.inputs.data
    if len(arguments) != len(inputs):
        raise EvaluationError(
            f"@{function.sym_name.data} takes {len(inputs)} arguments, got {len(arguments)}"
        )
    values = tuple(
        _argument(index, value, type_)
        for index, (value, type_) in enumerate(zip(arguments, inputs, strict=True))
    )
    with np.errstate(all="ignore"):
        results = interpreter.call_op(function, values)
    if not function.function_type.outputs.data:
        # A function that returns nothing shows its work in the buffers it was given
        # (destination-passing style): those are its result.
        results = tuple(
            value
            for value, type_ in zip(values, inputs, strict=True)
            if isinstance(type_, MemRefType)
        )
        if not results:
            raise EvaluationError(
                f"@{function.sym_name.data} returns nothing and is given no buffer to write: "
                "there is no result to compare"
            )
    outputs = tuple(np.array(result, copy=True) for result in results)
    return outputs[0] if len(outputs) == 1 else outputs


def entry_function(module: ModuleOp, entry_point: str | None) -> func.FuncOp:
    functions = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    names = [function.sym_name.data for function in functions]
    if entry_point is not None:
        candidates = [f for f in functions if f.sym_name.data == entry_point]
        if not candidates:
            other = [op for op in module.walk() if _symbol_name(op) == entry_point]
            if other:
                raise Unsupported(op_name(other[0]))
            raise EvaluationError(f"no function @{entry_point}; functions: {names or 'none'}")
        return candidates[0]
    by_name = [f for f in functions if f.sym_name.data == "main"]
    if by_name:
        return by_name[0]
    defined = [f for f in functions if f.body.blocks]
    if len(defined) == 1:
        return defined[0]
    if not defined:
        callables = [op for op in module.walk() if _symbol_name(op) and op.regions]
        if callables:
            raise Unsupported(op_name(callables[0]))
    raise EvaluationError(f"no @main function; pass an entry point (functions: {names})")


def _symbol_name(op: Operation) -> str | None:
    name = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return getattr(name, "data", None)


def check_supported(interpreter: ReplayInterpreter, function: func.FuncOp) -> None:
    """Raise `Unsupported` for the first op reachable from `function` that has no
    implementation, following `func.call`s, before anything runs."""
    seen: set[int] = set()
    pending: list[func.FuncOp] = [function]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if not current.body.blocks:
            raise Unsupported(f"call to external function @{current.sym_name.data}")
        for op in current.body.walk():
            if not interpreter.implements(op):
                raise Unsupported(op_name(op))
            if isinstance(op, func.CallOp):
                pending.append(_callee(interpreter.module, op.callee))


def _callee(module: ModuleOp, callee: SymbolRefAttr) -> func.FuncOp:
    target = SymbolTable.lookup_symbol(module, callee)
    if target is None:
        raise EvaluationError(f"func.call to unknown function {callee}")
    if not isinstance(target, func.FuncOp):
        raise Unsupported(op_name(target))
    return target


def _argument(index: int, value: Any, type_: Attribute) -> Any:
    """An argument as the function's parameter type wants it (a fresh, writable array)."""
    array = np.asarray(value)
    dtype = value_dtype(type_)
    if array.dtype != dtype:
        same_bits = (
            array.dtype.kind in "iu"
            and dtype.kind in "iu"
            and array.dtype.itemsize == dtype.itemsize
        )
        if not same_bits:
            raise EvaluationError(
                f"argument {index} has element type {array.dtype}, the function takes "
                f"{element_type(type_)}"
            )
        # Signless MLIR integers hold what XLA calls u32 or s32: same bits.
        array = array.view(dtype)
    if is_shaped(type_):
        expected = type_.get_shape()
        if len(expected) != array.ndim or any(
            size not in (DYNAMIC_INDEX, actual)
            for size, actual in zip(expected, array.shape, strict=True)
        ):
            raise EvaluationError(f"argument {index} has shape {array.shape}, expected {type_}")
        return np.array(array, copy=True)
    if array.size != 1:
        raise EvaluationError(f"argument {index} has shape {array.shape}, expected {type_}")
    return array.reshape(())[()]

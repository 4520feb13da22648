"""Helpers for the MLIR replay tests: run a snippet of MLIR on numpy arguments; read the
corpus's traces and snapshots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.formats.literal import literal_from_proto
from workbench.protos import hlo_pb2, mlir_trace_pb2
from workbench.replay.mlir import evaluate_mlir


def run(text: str, *arguments: object) -> object:
    """Evaluate `text` (a module or a bare `func.func @main`) on the arguments."""
    return evaluate_mlir(text, [np.asarray(argument) for argument in arguments])


def unary(op: str, type_: str, value: object, result: str | None = None, extra: str = "") -> object:
    """`%0 = <op> %a <extra> : <type>` in a function of one argument."""
    result = result or type_
    return run(
        f"func.func @main(%a: {type_}) -> {result} {{\n"
        f"  %0 = {op} %a{extra} : {type_}{'' if result == type_ else f' to {result}'}\n"
        f"  return %0 : {result}\n}}",
        value,
    )


def binary(op: str, type_: str, lhs: object, rhs: object, result: str | None = None) -> object:
    """`%0 = <op> %a, %b : <type>` in a function of two arguments."""
    result = result or type_
    return run(
        f"func.func @main(%a: {type_}, %b: {type_}) -> {result} {{\n"
        f"  %0 = {op} %a, %b : {type_}\n"
        f"  return %0 : {result}\n}}",
        lhs,
        rhs,
    )


def snapshot_values(path: Path) -> tuple[list[np.ndarray], np.ndarray]:
    """An HloSnapshot's arguments and recorded result."""
    snapshot = hlo_pb2.HloSnapshot()
    snapshot.ParseFromString(path.read_bytes())
    arguments = [literal_from_proto(argument) for argument in snapshot.arguments]
    return arguments, literal_from_proto(snapshot.result)


def trace_texts(path: Path) -> list[tuple[str, str]]:
    """(pass name, printed module) of each entry of an MlirCompilationTrace."""
    trace = mlir_trace_pb2.MlirCompilationTrace()
    trace.ParseFromString(path.read_bytes())
    return [(entry.after_pass, entry.mlir_module) for entry in trace.passes]

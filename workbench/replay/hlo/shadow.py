"""The "shadow" of an HLO module: the same program with every float type computed in f64.

Judging a step needs the truth its result should approach (see `replay/error_bound.py`); the
best estimate is the reference evaluated in higher precision. `shadow_module` rewrites a
module's shapes (f16, bf16, f8, f32 -> f64; c64 -> c128) and float constants, so the ordinary
evaluator runs it unchanged. Explicit conversions between float types become identities, which
is the point: the shadow is what the program means, before any rounding.

A few ops depend on the bits of their element type (`bitcast-convert`, a `bitcast` that
changes the type, `reduce-precision`, `stochastic-convert`, `rng`) or are library calls
(`custom-call`): they run in their declared types, fenced by converts (operands converted back
to their declared type, the result converted to the wide type).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue, Shape
from workbench.replay.errors import Unsupported
from workbench.replay.hlo.registry import BIT_EXACT

WIDE = {"f16": "f64", "bf16": "f64", "f32": "f64", "c64": "c128", "f8e5m2": "f64",
        "f8e4m3fn": "f64", "f8e4m3b11fnuz": "f64", "f8e5m2fnuz": "f64", "f8e4m3fnuz": "f64",
        "f8e4m3": "f64", "f8e3m4": "f64", "f4e2m1fn": "f64", "f8e8m0fnu": "f64"}


def widen_shape(shape: Shape) -> Shape:
    if shape.is_tuple:
        return replace(shape, tuple_shapes=tuple(widen_shape(s) for s in shape.tuple_shapes))
    wide = WIDE.get(shape.element_type)
    return shape if wide is None else replace(shape, element_type=wide)


def _widen_literal(value: LiteralValue) -> LiteralValue:
    if isinstance(value, tuple):
        return tuple(_widen_literal(part) for part in value)
    array = np.asarray(value)
    if array.dtype.kind == "c":
        return array.astype(np.complex128)
    if array.dtype == np.bool_ or array.dtype.kind in "iu":
        return array
    return array.astype(np.float64)


# The last module widened, and its shadow: a replay evaluates the same reference in f64 twice
# (on the inputs, then on perturbed inputs), and the loader hands out one shared module object.
_last: tuple[HloModule, HloModule] | None = None


def shadow_module(module: HloModule) -> HloModule:
    """`module` with every float type widened (a new module; `module` is not changed).

    Raises `Unsupported` for what cannot be widened faithfully (a fenced op with a tuple
    operand or a called computation).
    """
    global _last
    if _last is not None and _last[0] is module:
        return _last[1]
    shadow = widened_module(module)
    _last = (module, shadow)
    return shadow


def widened_module(module: HloModule) -> HloModule:
    """`shadow_module` without remembering it (for small modules made on the way, which
    should not push out the one a replay evaluates twice)."""
    return replace(module, computations=[_shadow_computation(c) for c in module.computations],
                   widened=True)


def _fenced(instruction: Instruction, shapes: dict[str, Shape]) -> bool:
    if instruction.opcode in BIT_EXACT:
        return True
    if instruction.opcode == "bitcast" and instruction.operands:
        operand = shapes[instruction.operands[0]]
        return operand.element_type != instruction.shape.element_type
    return False


def _shadow_computation(computation: Computation) -> Computation:
    shapes = {i.name: i.shape for i in computation.instructions}
    out: list[Instruction] = []
    for instruction in computation.instructions:
        wide_shape = widen_shape(instruction.shape)
        if not _fenced(instruction, shapes):
            literal = instruction.literal
            out.append(replace(instruction, shape=wide_shape,
                               literal=None if literal is None else _widen_literal(literal)))
            continue
        if instruction.called_computations:
            raise Unsupported(f"a higher-precision {instruction.opcode} with called "
                              "computations")
        operands = []
        for number, name in enumerate(instruction.operands):
            declared = shapes[name]
            if widen_shape(declared) == declared:
                operands.append(name)
                continue
            if declared.is_tuple:
                raise Unsupported(f"a higher-precision {instruction.opcode} of a tuple")
            narrow = f"{instruction.name}.shadow.in{number}"
            out.append(Instruction(narrow, "convert", declared, operands=[name]))
            operands.append(narrow)
        if wide_shape == instruction.shape:
            out.append(replace(instruction, operands=operands))
            continue
        strict = f"{instruction.name}.shadow.strict"
        out.append(replace(instruction, name=strict, operands=operands))
        out.extend(_widened(instruction.name, strict, instruction.shape))
    return Computation(computation.name, out, computation.root_name, computation.is_entry,
                       computation.id)


def _widened(name: str, source: str, shape: Shape) -> list[Instruction]:
    """Instructions naming `name` the value of `source` (of `shape`) in the wide types."""
    if not shape.is_tuple:
        return [Instruction(name, "convert", widen_shape(shape), operands=[source])]
    parts: list[Instruction] = []
    names = []
    for index, part in enumerate(shape.tuple_shapes):
        if part.is_tuple:
            raise Unsupported("a higher-precision nested tuple result")
        element = f"{name}.shadow.{index}"
        parts.append(Instruction(element, "get-tuple-element", part, operands=[source],
                                 tuple_index=index))
        if widen_shape(part) != part:
            parts.append(Instruction(f"{element}.wide", "convert", widen_shape(part),
                                     operands=[element]))
            element = f"{element}.wide"
        names.append(element)
    parts.append(Instruction(name, "tuple", widen_shape(shape), operands=names))
    return parts

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

The entry's float parameters may stay in their declared types (`narrow`): each instruction
that reads one reads its own f64 copy, made just before it and freed after it, so the
evaluation never holds a widened copy of every argument (for a GPT-2-size training step,
3.9 GB of f64 parameters and optimizer state beside their 1.9 GB in f32).
"""

from __future__ import annotations

from collections.abc import Sequence
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


# The last module widened, and its shadows by the parameters left narrow: a replay evaluates
# the same reference in f64 twice (on the inputs, then on perturbed inputs), and the loader
# hands out one shared module object.
_last: tuple[HloModule, dict[frozenset[int], HloModule]] | None = None


def shadow_module(module: HloModule, narrow: frozenset[int] = frozenset()) -> HloModule:
    """`module` with every float type widened (a new module; `module` is not changed); the
    entry parameters numbered in `narrow` (float arrays) keep their declared types and are
    widened at each use.

    Raises `Unsupported` for what cannot be widened faithfully (a fenced op with a tuple
    operand or a called computation).
    """
    global _last
    if _last is None or _last[0] is not module:
        _last = (module, {})
    shadow = _last[1].get(narrow)
    if shadow is None:
        shadow = narrowed_module(module, narrow)
        _last[1][narrow] = shadow
    return shadow


def narrow_parameters(module: HloModule) -> frozenset[int]:
    """The entry parameters a shadow can keep narrow: float arrays (not complex)."""
    return frozenset(p.parameter_number or 0 for p in module.entry.parameters
                     if p.shape.is_array and not p.shape.is_tuple
                     and WIDE.get(p.shape.element_type) == "f64")


def narrow_arguments(module: HloModule, arguments: Sequence[LiteralValue]) -> frozenset[int]:
    """The entry parameters a shadow can keep narrow whose arguments are given in their
    declared types (not widened already)."""
    from workbench.replay.hlo.dtypes import dtype_of

    declared = {p.parameter_number or 0: p.shape for p in module.entry.parameters}
    return frozenset(number for number in narrow_parameters(module)
                     if number < len(arguments) and getattr(arguments[number], "dtype", None)
                     == dtype_of(declared[number].element_type))


def narrowed_module(module: HloModule, narrow: frozenset[int]) -> HloModule:
    """`widened_module` with the entry parameters in `narrow` widened at each use, without
    remembering it (the noise stage's; `shadow_module` remembers the last)."""
    shadow = widened_module(module)
    return _narrow_entry(shadow, module, narrow) if narrow else shadow


def _narrow_entry(shadow: HloModule, module: HloModule, narrow: frozenset[int]) -> HloModule:
    """`shadow` with the entry parameters numbered in `narrow` in their declared types, each
    use reading its own widened copy."""
    declared = {p.parameter_number or 0: p.shape for p in module.entry.parameters}
    entry = shadow.entry
    narrowed: dict[str, Shape] = {}  # parameter name -> its declared shape
    out: list[Instruction] = []
    for instruction in entry.instructions:
        number = instruction.parameter_number or 0
        if instruction.opcode == "parameter" and number in narrow:
            narrowed[instruction.name] = declared[number]
            out.append(replace(instruction, shape=declared[number]))
            continue
        reads = [name for name in dict.fromkeys(instruction.operands) if name in narrowed]
        if not reads:
            out.append(instruction)
            continue
        copies = {name: f"{instruction.name}.shadow.arg{index}"
                  for index, name in enumerate(reads)}
        out.extend(Instruction(copy, "convert", widen_shape(narrowed[name]), operands=[name])
                   for name, copy in copies.items())
        out.append(replace(instruction,
                           operands=[copies.get(name, name) for name in instruction.operands]))
    root = entry.root_name
    if root in narrowed:
        out.append(Instruction(f"{root}.shadow.result", "convert", widen_shape(narrowed[root]),
                               operands=[root]))
        root = f"{root}.shadow.result"
    computation = Computation(entry.name, out, root, entry.is_entry, entry.id)
    return replace(shadow, computations=[computation if c is entry else c
                                         for c in shadow.computations])


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

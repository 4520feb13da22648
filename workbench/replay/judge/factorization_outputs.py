"""Which outputs of a module a factorization made, and the matrix it factorized.

The judgment of a recorded factorization by its relations (`factorizations.py`) needs, for
each LAPACK or cuSOLVER call whose result is not unique (`routine_of`), which outputs of the
module are its outputs, and how the program moved them there (`factorizations`: through
tuple/get-tuple-element/call/copy/reshape/transpose, JAX's mask `select(info == 0, x, NaN)`,
`complex(wr, wi)`, and for QR's R jnp.triu of a leading block of `geqrf`'s packed output;
`orgqr`'s Q tied to the `geqrf` it reads); and the matrix itself (`matrix_of`): an input of
the execution moved the same ways, or computed inside the module (JAX's eigh symmetrizes its
input), taken from an evaluation of the module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue
from workbench.replay.errors import EvaluationError, Unsupported

# Per routine and kind (real/complex), what each output of the custom-call is.
_OUTPUTS = {
    ("gees", False): ("t", "z", "wr", "wi"),
    ("gees", True): ("t", "z", "values"),
    ("geev", False): ("wr", "wi", "vl", "vr"),
    ("geev", True): ("values", "vl", "vr"),
    **{(svd, complex_): ("a", "s", "u", "vt") for svd in ("gesdd", "gesvd")
       for complex_ in (False, True)},
    **{("syevd", complex_): ("v", "w", "info") for complex_ in (False, True)},
    **{("geqrf", complex_): ("a", "tau") for complex_ in (False, True)},
    **{("orgqr", complex_): ("q",) for complex_ in (False, True)},
}
# What each routine's factorization is called in a verdict.
NAMES = {"gees": "Schur form", "geev": "eigen-decomposition",
         "gesdd": "singular value decomposition", "gesvd": "singular value decomposition",
         "syevd": "Hermitian eigen-decomposition", "geqrf": "QR factorization",
         "orgqr": "QR factorization"}
# LAPACK's complex routines under their real twins' names; cuSOLVER's targets (JAX on GPU).
_ALIASES = {"heevd": "syevd", "ungqr": "orgqr"}
_GPU_TARGETS = {"cusolver_syevd_ffi": "syevd", "cusolver_geqrf_ffi": "geqrf",
                "cusolver_orgqr_ffi": "orgqr"}
# What a predicate that masks a triangle (jnp.triu's iota compare) may be made of: no value
# of the execution reaches it.
_INDEX_OPS = frozenset(("iota", "constant", "broadcast", "reshape", "transpose", "copy",
                        "compare", "add", "subtract", "multiply", "and", "or", "not",
                        "convert", "select", "maximum", "minimum"))

# A move of an array: ("transpose", permutation, dims before) or ("reshape", dims after,
# dims before).
Transform = tuple[str, tuple[int, ...], tuple[int, ...]]


@dataclass
class Factorization:
    """One non-unique factorization whose outputs are outputs of the module: which entry
    parameter its matrix is (and how it is moved there; None: computed inside `module`, its
    value taken from an evaluation of it, the call reached through the calls `stack`), and
    per output it has, the result path and how the custom-call's output was moved to it."""

    call: Instruction
    routine: str
    complex_: bool
    parameter: int | None
    to_operand: list[Transform]
    outputs: dict[str, tuple[tuple[int, ...], list[Transform]]] = field(default_factory=dict)
    module: HloModule | None = None
    stack: tuple[Instruction, ...] = ()


def apply_moves(array: np.ndarray, transforms: list[Transform]) -> np.ndarray:
    """`array` moved as `transforms` say (the program's moves, in order)."""
    for kind, argument, _ in transforms:
        array = np.transpose(array, argument) if kind == "transpose" else array.reshape(argument)
    return array


def undo_moves(array: np.ndarray, transforms: list[Transform]) -> np.ndarray:
    """`array` moved back where `transforms` took it from."""
    for kind, argument, before in reversed(transforms):
        array = (np.transpose(array, np.argsort(argument)) if kind == "transpose"
                 else array.reshape(before))
    return array


def _move(instruction: Instruction, operand: Instruction) -> list[Transform]:
    """The move `instruction` (a copy, reshape or transpose of `operand`) makes."""
    if instruction.opcode == "reshape":
        return [("reshape", instruction.shape.dims, operand.shape.dims)]
    if instruction.opcode == "transpose":
        return [("transpose", tuple(instruction.dimensions or ()), operand.shape.dims)]
    return []


class _Tracer:
    """Follows values through moves that keep them what they are (see the module doc)."""

    def __init__(self, module: HloModule) -> None:
        self.computations = module.by_name
        self.entry = module.entry

    def output(self, computation: Computation, name: str, stack: tuple[Instruction, ...],
               moves: list[Transform], part: str = "") -> tuple[Instruction, str,
                                                               list[Transform],
                                                               tuple[Instruction, ...]] | None:
        """The factorization output `name` is (its call, what output, moves from it).

        `part` says what is being followed: "" a whole output; "block" a leading block of
        one (a slice from the origin); "r" the upper triangle of a leading block (jnp.triu's
        select against zero), QR's R in `geqrf`'s packed output; "reflectors" what
        `orgqr` reads of it (a leading block, zero padded)."""
        instruction = computation.by_name[name]
        opcode, operands = instruction.opcode, instruction.operands
        if opcode in ("copy", "reshape", "transpose"):
            operand = computation.by_name[operands[0]]
            return self.output(computation, operand.name, stack,
                               [*_move(instruction, operand), *moves], part)
        if opcode == "select" and len(operands) == 3:
            if _is_nan(computation, operands[2]):
                return self.output(computation, operands[1], stack, moves, part)
            kept = _triangle_kept(computation, instruction)
            if kept is None or part not in ("", "block"):
                return None
            return self._inner(computation, kept, stack, moves, "r")
        if opcode == "slice" and _is_leading_block(instruction) and part != "reflectors":
            return self._inner(computation, operands[0], stack, moves, part or "block")
        if opcode in ("slice", "pad") and part == "reflectors":
            if opcode == "slice" and not _is_leading_block(instruction):
                return None
            return self._inner(computation, operands[0], stack, moves, part)
        if opcode == "complex" and not part:  # jnp's real eigenvalues: complex(wr, wi)
            parts = [self.output(computation, o, stack, []) for o in operands]
            if (parts[0] is None or parts[1] is None or parts[0][0] is not parts[1][0]
                    or (parts[0][1], parts[1][1]) != ("wr", "wi") or parts[0][2] or parts[1][2]):
                return None
            return parts[0][0], "values", moves, parts[0][3]
        if opcode == "call" and instruction.called_computations:
            callee = self.computations[instruction.called_computations[0]]
            return self.output(callee, callee.root.name, (*stack, instruction), moves, part)
        if opcode == "custom-call" and not instruction.shape.is_tuple and not part:
            kind = routine_of(instruction)  # a single output: orgqr's Q
            if kind is None or len(_OUTPUTS[kind]) != 1:
                return None
            return instruction, _OUTPUTS[kind][0], moves, stack
        if opcode != "get-tuple-element" or instruction.tuple_index is None:
            return None
        source = computation.by_name[operands[0]]
        index = instruction.tuple_index
        if source.opcode == "tuple":
            return self.output(computation, source.operands[index], stack, moves, part)
        if source.opcode == "call" and source.called_computations:
            callee = self.computations[source.called_computations[0]]
            root = callee.root
            if root.opcode != "tuple":
                return None
            return self.output(callee, root.operands[index], (*stack, source), moves, part)
        kind = routine_of(source)
        if kind is None or index >= len(_OUTPUTS[kind]):
            return None
        output = _OUTPUTS[kind][index]
        if part:  # R, or the reflectors orgqr reads: only geqrf's packed output
            if kind[0] != "geqrf" or output != "a" or part == "block":
                return None
            output = "r" if part == "r" else "a"
        return source, output, moves, stack

    def _inner(self, computation: Computation, name: str, stack: tuple[Instruction, ...],
               moves: list[Transform], part: str) -> tuple[Instruction, str, list[Transform],
                                                           tuple[Instruction, ...]] | None:
        """`output` of a part of an output (`part`): no move may reshape it inside."""
        found = self.output(computation, name, stack, [], part)
        if found is None or found[2]:
            return None
        return found[0], found[1], moves, found[3]

    def reflectors_of(self, orgqr: Instruction, stack: tuple[Instruction, ...]
                      ) -> tuple[Instruction, tuple[Instruction, ...]] | None:
        """The `geqrf` whose packed output and tau `orgqr` reads (and the calls to it)."""
        computation = self.computation_of(orgqr)
        if computation is None or len(orgqr.operands) != 2:
            return None
        packed = self._inner(computation, orgqr.operands[0], stack, [], "reflectors")
        tau = self.output(computation, orgqr.operands[1], stack, [])
        if packed is None or tau is None or packed[0] is not tau[0] or tau[2] \
                or (packed[1], tau[1]) != ("a", "tau"):
            return None
        return packed[0], packed[3]

    def parameter(self, computation: Computation, name: str,
                  stack: tuple[Instruction, ...]) -> tuple[int, list[Transform]] | None:
        """The entry parameter `name` is, and the moves from it (None: computed)."""
        instruction = computation.by_name[name]
        if instruction.opcode == "parameter" and instruction.parameter_number is not None:
            if not stack:
                return instruction.parameter_number, []
            call = stack[-1]
            caller = self.computation_of(call)
            if caller is None:
                return None
            return self.parameter(caller, call.operands[instruction.parameter_number],
                                  stack[:-1])
        if instruction.opcode not in ("copy", "reshape", "transpose"):
            return None
        found = self.parameter(computation, instruction.operands[0], stack)
        if found is None:
            return None
        number, moves = found
        operand = computation.by_name[instruction.operands[0]]
        return number, [*moves, *_move(instruction, operand)]

    def computation_of(self, instruction: Instruction) -> Computation | None:
        """The computation that holds `instruction`."""
        for computation in self.computations.values():
            if computation.by_name.get(instruction.name) is instruction:
                return computation
        return None


def _splat(computation: Computation, name: str) -> np.ndarray | None:
    """The one value `name` holds everywhere when it is a scalar constant (broadcast or
    not), else None."""
    instruction = computation.by_name[name]
    while instruction.opcode == "broadcast":
        instruction = computation.by_name[instruction.operands[0]]
    if instruction.opcode != "constant" or instruction.literal is None:
        return None
    value = np.asarray(instruction.literal)
    return value if value.size == 1 else None


def _is_zero(computation: Computation, name: str) -> bool:
    value = _splat(computation, name)
    return value is not None and bool((value == 0).all())


def _triangle_kept(computation: Computation, select: Instruction) -> str | None:
    """The operand `select` keeps where it does not put zero, when its predicate is made of
    indices alone (no value of the execution: jnp.triu's iota compare), else None."""
    predicate, on_true, on_false = select.operands
    if _is_zero(computation, on_true):
        kept = on_false
    elif _is_zero(computation, on_false):
        kept = on_true
    else:
        return None
    pending, seen = [predicate], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        instruction = computation.by_name[name]
        if instruction.opcode not in _INDEX_OPS:
            return None
        pending.extend(instruction.operands)
    return kept


def _is_leading_block(instruction: Instruction) -> bool:
    """A slice from the origin, every stride 1."""
    bounds = instruction.slice or ()
    return bool(bounds) and all(b.start == 0 and b.stride == 1 for b in bounds)


def _is_nan(computation: Computation, name: str) -> bool:
    value = _splat(computation, name)
    return value is not None and bool(np.isnan(value).all())


def routine_of(instruction: Instruction) -> tuple[str, bool] | None:
    """(the routine: "gees", "geev", "gesdd", "gesvd", "syevd", "geqrf" or "orgqr"; complex?)
    for a LAPACK or cuSOLVER custom-call whose result is not unique (or is, with `geqrf`,
    half of a QR factorization), else None."""
    from workbench.replay.hlo.lapack import TARGET

    if instruction.opcode != "custom-call":
        return None
    target = instruction.custom_call_target or ""
    gpu = _GPU_TARGETS.get(target)
    if gpu is not None:
        shape = instruction.shape
        first = shape.tuple_shapes[0] if shape.is_tuple and shape.tuple_shapes else shape
        return gpu, first.element_type in ("c64", "c128")
    match = TARGET.fullmatch(target)
    if match is None:
        return None
    routine = _ALIASES.get(match.group(2), match.group(2))
    if routine not in NAMES:
        return None
    return routine, match.group(1) in "cz"


def factorizations(module: HloModule) -> list[Factorization]:
    """The non-unique factorizations among the outputs of `module`'s result (a tuple's
    elements, or the result itself)."""
    tracer = _Tracer(module)
    entry = module.entry
    root = entry.root
    results = ([((index,), name) for index, name in enumerate(root.operands)]
               if root.opcode == "tuple" else [((), root.name)])
    found: dict[str, Factorization] = {}
    for path, name in results:
        traced = tracer.output(entry, name, (), [])
        if traced is None:
            continue
        call, output, moves, stack = traced
        kind = routine_of(call)
        assert kind is not None
        if kind[0] == "orgqr":  # Q: judged with the geqrf it is made from
            source = tracer.reflectors_of(call, stack)
            if source is None:
                continue
            call, stack = source
            kind = ("geqrf", kind[1])
        factorization = found.get(call.name)
        if factorization is None:
            callee = tracer.computation_of(call)
            if callee is None:
                continue
            operand = tracer.parameter(callee, call.operands[0], stack)
            number, to_operand = operand if operand is not None else (None, [])
            factorization = Factorization(call, kind[0], kind[1], number, to_operand,
                                          module=module, stack=stack)
            found[call.name] = factorization
        factorization.outputs[output] = (path, moves)
    return list(found.values())


def output_of(factorization: Factorization, value: Any, key: str) -> np.ndarray | None:
    """The custom-call's output `key` as recorded in `value` (the module's result), moved
    back; None when it is not an output of the module."""
    if key not in factorization.outputs:
        return None
    path, moves = factorization.outputs[key]
    part: Any = value
    for i in path:
        part = part[i]
    return undo_moves(np.asarray(part), moves)


class _OperandCatcher:
    """Keeps the first value of the instruction `target` made in the computation reached
    through the calls `stack` (an `interpreter.Observer`)."""

    def __init__(self, target: Instruction, stack: tuple[Instruction, ...]) -> None:
        self.target, self.stack = target, stack
        self.calls: list[Instruction | None] = []
        self.last: Instruction | None = None
        self.found: np.ndarray | None = None

    def enter(self, computation: Computation) -> None:
        self.calls.append(self.last if self.calls else None)  # the entry: no call

    def before(self, instruction: Instruction) -> None:
        self.last = instruction

    def value(self, instruction: Instruction, value: Any) -> None:
        calls = self.calls[1:]
        if (self.found is None and instruction is self.target and len(calls) == len(self.stack)
                and all(a is b for a, b in zip(calls, self.stack, strict=True))):
            self.found = np.array(value, copy=True)

    def leave(self) -> None:
        self.calls.pop()


def matrix_of(factorization: Factorization, arguments: list[LiteralValue]) -> np.ndarray:
    """The matrix the call factorized: its entry parameter moved as the program moves it,
    or, computed inside the module (JAX's eigh symmetrizes its input first), its value in an
    evaluation of the module (strictly rounded: the real run's own differs by its rounding,
    within the relations' threshold when a few operations make it). Raises ValueError when
    it cannot be had."""
    if factorization.parameter is not None:
        return apply_moves(np.asarray(arguments[factorization.parameter]), factorization.to_operand)
    from workbench.replay.hlo import evaluate_module

    module = factorization.module
    if module is None:
        raise ValueError(f"{factorization.call.name}: its matrix is computed, and no module")
    computation = _Tracer(module).computation_of(factorization.call)
    if computation is None:
        raise ValueError(f"{factorization.call.name}: not in its module")
    target = computation.by_name[factorization.call.operands[0]]
    catcher = _OperandCatcher(target, factorization.stack)
    try:
        evaluate_module(module, arguments, observer=catcher)
    except (Unsupported, EvaluationError) as error:
        raise ValueError(f"{factorization.call.name}: its matrix could not be evaluated "
                         f"({error})") from error
    if catcher.found is None:
        raise ValueError(f"{factorization.call.name}: its operand was not evaluated")
    return catcher.found

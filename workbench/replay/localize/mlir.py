"""Localization for MLIR timelines (an xDSL trace, a print-ir log): the op that departs.

The same search as for HLO (`localize.py`), on the xDSL interpreter's op results: both steps
are evaluated with an observer, ops are matched across the pass by their result's name
(`%scaled`; printed IR keeps the names a pass does not touch) and op name, each matched result
is judged against its counterpart at the same occurrence (a loop body's op runs once per
iteration) by the verdicts' rule (`compare` with the earlier step's f64 shadow and perturbed
shadow as the truth), and the culprit is the first result that departs while every operand
agrees. Ops whose results have no name are matched by their structure (op name, attributes,
operands). Memref results (buffers written later) are not compared; what is stored in them is, as
the values stored. The culprit carries what the reducer needs (`MlirCulprit`, `reduce_mlir`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from workbench.hlo_ir import LiteralValue
from workbench.model import Step
from workbench.replay.judge.compare import Comparison, Stage, Truth, compare
from workbench.replay.localize.result import (
    InstructionRef,
    Localization,
    LocalizeError,
    MlirCulprit,
    NotJudged,
    differing_elements,
)
from workbench.replay.localize.text import NEIGHBOURS
from workbench.replay.localize.truth import stage_truth

Key = tuple[str, int]  # (the op's name key, result number)
Occurrence = tuple[Key, int]  # ... and how many times it ran before
ARGUMENT = "^"  # the key of the entry function's argument number N: ("^", N)


def operand_key(operand: SSAValue, keys: dict[Operation, str]) -> Key | None:
    """The key of an operand: an op's result, or an argument of the entry function (a
    function's block argument); None for other block arguments (a loop's index)."""
    if isinstance(operand, OpResult):
        return (keys[operand.op], operand.index)
    if isinstance(operand, BlockArgument) and isinstance(operand.block.parent_op(), func.FuncOp):
        return (ARGUMENT, operand.index)
    return None


def op_keys(module: Operation) -> dict[Operation, str]:
    """A key per op that names the same op across passes: `@main/%scaled` when its result
    has a name, else its structure (`@main/arith.constant:1f3a...`: the op name, attributes
    and operands' keys, hashed), which passes that renumber or move ops keep."""
    keys: dict[Operation, str] = {}
    for op in module.walk():
        function = op.parent_op()
        while function is not None and function.name != "func.func":
            function = function.parent_op()
        sym_name = function.properties.get("sym_name") if function is not None else None
        scope = sym_name.data if isinstance(sym_name, StringAttr) else ""
        hint = op.results[0].name_hint if op.results else None
        if hint:
            keys[op] = f"@{scope}/%{hint}"
            continue
        operands = []
        for operand in op.operands:
            owner = operand.owner
            operands.append(keys.get(owner, "?") if isinstance(owner, Operation)
                            else f"^{getattr(operand, 'index', '?')}")
        structure = repr((op.name, sorted((k, str(v)) for k, v in op.properties.items()),
                          sorted((k, str(v)) for k, v in op.attributes.items()), operands,
                          [str(r.type) for r in op.results]))
        digest = hashlib.sha1(structure.encode()).hexdigest()[:10]
        keys[op] = f"@{scope}/{op.name}:{digest}"
    return keys


def _record(text: str, arguments: Sequence[np.ndarray], entry_point: str | None,
            ) -> tuple[dict[Occurrence, Any], list[tuple[Occurrence, Operation]],
                       dict[Operation, str]]:
    """Every non-buffer op result of one evaluation, by occurrence, in evaluation order."""
    from workbench.replay.errors import EvaluationError, Unsupported
    from workbench.replay.mlir.evaluate import evaluate_module
    from workbench.replay.mlir.parse import parse_module

    module, resources = parse_module(text)
    keys = op_keys(module)
    values: dict[Occurrence, Any] = {}
    order: list[tuple[Occurrence, Operation]] = []
    runs: dict[Key, int] = {}

    def observe(op: Operation, number: int, value: Any) -> None:
        if isinstance(op.results[number].type, MemRefType):
            return
        key = (keys[op], number)
        count = runs.get(key, 0)
        runs[key] = count + 1
        values[(key, count)] = np.array(value, copy=True)
        order.append(((key, count), op))

    try:
        evaluate_module(module, arguments, entry_point, resources, observe)
    except Unsupported as error:
        raise NotJudged(f"unsupported: {error.what}") from None
    except EvaluationError as error:
        raise NotJudged(f"cannot evaluate: {error}") from None
    return values, order, keys


class _Truths:
    """The earlier step's f64 shadow and perturbed shadow, recorded once each on need."""

    def __init__(self, text: str, arguments: Sequence[np.ndarray], entry_point: str | None,
                 strict: dict[Occurrence, Any]) -> None:
        self.text, self.arguments, self.entry_point = text, arguments, entry_point
        self.strict = strict
        self.made: dict[bool, dict[Occurrence, Any]] = {}
        self.evaluations = 0

    def values(self, perturbed: bool) -> dict[Occurrence, Any]:
        from workbench.replay.judge.error_bound import perturb, widen
        from workbench.replay.mlir.shadow import shadow_text

        if perturbed not in self.made:
            arguments = (perturb(self.arguments) if perturbed
                         else [widen(a) for a in self.arguments])
            self.evaluations += 1
            arrays = [np.asarray(a) for a in arguments]  # MLIR arguments are arrays
            self.made[perturbed] = _record(shadow_text(self.text), arrays, self.entry_point)[0]
        return self.made[perturbed]


class _OccurrenceTruth:
    """The truth of one earlier-step result in the verdicts' two stages (a TruthSource)."""

    def __init__(self, truths: _Truths, key: Occurrence) -> None:
        self.truths, self.key = truths, key
        self.problem: str | None = None
        self.last: Truth | None = None

    def stages(self) -> tuple[bool, ...]:
        return (False, True)

    def truth(self, conditioning: Stage) -> Truth | None:
        if isinstance(conditioning, str):  # the noise stage: not among this source's stages
            self.problem = f"no {conditioning} stage for an earlier step's result"
            return None
        truths = self.truths
        truth, problem = stage_truth(
            lambda: truths.strict[self.key], lambda: truths.values(False).get(self.key),
            lambda: truths.values(True).get(self.key), conditioning)
        if truth is None:
            self.problem = problem
            return None
        self.last = truth
        return truth


def _ref(op: Operation, key: str, occurrence: int, lines: list[str]) -> InstructionRef:
    hint = op.results[0].name_hint if op.results else None
    function = key.split("/", 1)[0]
    ref = InstructionRef(name=f"%{hint}" if hint else key.split("/", 1)[1],
                         computation=function, opcode=op.name, op_name="", source="",
                         context=f"{function}, occurrence {occurrence}")
    if hint:
        for number, line in enumerate(lines):
            if line.lstrip().startswith(f"%{hint} = "):
                ref.line, ref.text = number, line.strip()
                ref.neighbours = [text.rstrip() for text in
                                  lines[max(0, number - NEIGHBOURS):number + NEIGHBOURS + 1]]
                break
    return ref


def localize_mlir(before_text: str, after_text: str, arguments: Sequence[LiteralValue],
                  before_step: Step, after_step: Step,
                  entry_point: str | None = None) -> Localization:
    """Localize the departure between two printed MLIR modules evaluated on `arguments`."""
    start = time.perf_counter()
    arrays = []
    for number, argument in enumerate(arguments):
        if isinstance(argument, tuple):
            raise LocalizeError(f"tuple argument {number} (MLIR functions take arrays)")
        arrays.append(np.asarray(argument))
    strict, before_order, before_keys = _record(before_text, arrays, entry_point)
    values, order, keys = _record(after_text, arrays, entry_point)
    truths = _Truths(before_text, arrays, entry_point, strict)
    result = Localization(before_step, after_step)
    matched = {key for key, _ in values if (key, 0) in strict}
    result.matched = len(matched)
    result.unmatched = sorted({k[0] for k, _ in values if k not in matched})
    agrees: dict[Occurrence, bool] = {}
    latest: dict[Key, int] = {}
    for occurrence, op in order:
        key, count = occurrence
        latest[key] = count
        reference = strict.get(occurrence)
        if reference is None:
            continue
        operands = []
        for operand in op.operands:
            owner = operand.owner if isinstance(operand, SSAValue) else None
            if isinstance(owner, Block) or not isinstance(owner, Operation) or isinstance(
                    operand.type, MemRefType) or not isinstance(operand, OpResult):
                continue  # a block argument (a loop index, an input) or a buffer
            operand_key = (keys[owner], operand.index)
            operands.append((operand_key, latest.get(operand_key, 0)))
        if not all(agrees.get(o, False) for o in operands):
            agrees[occurrence] = False
            result.departing += 1
            continue
        value = values[occurrence]
        if value.dtype == reference.dtype and np.array_equal(value, reference):
            agrees[occurrence] = True
            continue
        source = _OccurrenceTruth(truths, occurrence)
        comparison: Comparison = compare(reference, value, truth=source)
        if comparison.bound is not None:
            result.beyond_tolerance += 1
        agrees[occurrence] = comparison.ok
        if comparison.ok:
            continue
        result.departing += 1
        other = next((op for op, k in before_keys.items() if k == key[0]), None)
        result.mlir = _culprit(occurrence, op, keys, latest, other, before_keys,
                               before_order, strict, arrays)
        result.instruction = _ref(op, key[0], count, after_text.splitlines())
        result.counterpart = None if other is None else _ref(other, key[0], count,
                                                           before_text.splitlines())
        result.comparison = comparison
        result.elements = differing_elements(reference, value, comparison, source.last)
        break
    else:
        result.explanation = ("no op result of the later step departs from its counterpart "
                              "while its operands agree (results without a counterpart: "
                              + (", ".join(result.unmatched[:5]) or "none") + ")")
    result.evaluations = 2 + truths.evaluations
    result.seconds = time.perf_counter() - start
    return result


def _culprit(occurrence: Occurrence, op: Operation, keys: dict[Operation, str],
             latest: dict[Key, int], other: Operation | None,
             before_keys: dict[Operation, str],
             before_order: list[tuple[Occurrence, Operation]],
             strict: dict[Occurrence, Any], arrays: list[np.ndarray]) -> MlirCulprit:
    """The reducer's data: the earlier step's values of both versions' operands at the run
    that departs (each operand's latest run before it, in its own step's order)."""
    (key, number), count = occurrence
    culprit = MlirCulprit(key, number, count, expected=strict.get(occurrence))

    def keep(operands: Any, op_keys: dict[Operation, str], runs: dict[Key, int]) -> None:
        for operand in operands:
            found = operand_key(operand, op_keys)
            if found is None or found in culprit.operands:
                continue
            if found[0] == ARGUMENT:
                if found[1] < len(arrays):
                    culprit.operands[found] = arrays[found[1]]
            elif (found, runs.get(found, 0)) in strict:
                culprit.operands[found] = strict[(found, runs.get(found, 0))]

    keep(op.operands, keys, latest)
    if other is not None:  # the earlier version's operands, at its own run `count`
        latest_before: dict[Key, int] = {}
        for (made, run), made_op in before_order:
            if made_op is other and made == (key, number) and run == count:
                break
            latest_before[made] = run
        keep(other.operands, before_keys, latest_before)
    return culprit

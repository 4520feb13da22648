"""What localization finds (`Localization`: the culprit instruction, its counterpart, the
differing elements) and the keys values are known by.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.hlo_ir import HloModule, LiteralValue, Shape
from workbench.model import Step
from workbench.replay.judge.compare import Comparison, Truth, compare
from workbench.replay.localize.match import (
    Key,
    Site,
)

DynKey = tuple[Key, tuple[int, ...]]  # a site and the loop iterations it was made in
Region = tuple[HloModule, list[DynKey]]  # a value's region and the values it starts from


@dataclass
class MlirCulprit:
    """What reducing an MLIR culprit needs, as plain data (it crosses from a worker process):
    the op (its key and result number) and the run that departs, and the earlier step's
    values there: of the operands of both versions (by operand key; the entry function's
    arguments as (`ARGUMENT`, number)) and of the result."""

    key: str
    result: int
    occurrence: int
    # By operand key (`mlir.Key`: the op's name key, result number).
    operands: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    expected: np.ndarray | None = None


class LocalizeError(Exception):
    """Localization cannot be done (not HLO, a step that cannot be evaluated, too large)."""


class NotJudged(LocalizeError):
    """A step's values could not be had (an op the evaluator lacks, an evaluation error): the
    two steps were not judged, which a caller reports apart from bad arguments."""


@dataclass
class ElementDiff:
    """One differing element, side by side: before, after, the truth and its bound."""

    index: tuple[int, ...]
    before: Any
    after: Any
    truth: Any = None
    bound: float | None = None


@dataclass
class InstructionRef:
    """An instruction in the user's words: where it is, what it computes, which source line."""

    name: str
    computation: str
    opcode: str
    op_name: str
    source: str  # "file:line", or "" when the metadata does not say
    context: str  # the calling context, e.g. "fusion add_rsqrt_fusion" or "while.3 iteration 2"
    text: str = ""  # the instruction's line in the step's text dump
    neighbours: list[str] = field(default_factory=list)  # the lines around it
    line: int | None = None  # 0-based line of `text` in the step's text dump
    inside: str = ""  # where inside its called computations it changed (`inside.py`)
    metadata_from: str = ""  # whose op_name and source these are, when not its own


@dataclass
class Localization:
    """What comparing two steps value by value found.

    `instruction` (the later step's) and `counterpart` (the earlier step's) are set when one
    instruction explains the departure; otherwise `explanation` says why none does.
    """

    before: Step
    after: Step
    instruction: InstructionRef | None = None
    counterpart: InstructionRef | None = None
    comparison: Comparison | None = None
    elements: list[ElementDiff] = field(default_factory=list)
    explanation: str = ""
    matched: int = 0  # sites of the later step with a counterpart
    unmatched: list[str] = field(default_factory=list)  # later-step instructions with none
    beyond_tolerance: int = 0  # values the bound judged (some beyond the fixed tolerance)
    outputs: Comparison | None = None  # the two results, judged when no culprit was found
    departing: int = 0  # values found to depart, up to the culprit
    evaluations: int = 0  # evaluations of a whole step (shadow runs count, even when cut short)
    seconds: float = 0.0
    kept_bytes: int = 0  # the most bytes of values held at once
    spilled_bytes: int = 0  # the earlier step's values written to disk beyond the memory limit
    matched_by: str = ""  # how the culprit was matched to its counterpart (`Matching.how`)
    legal_rewrites: list[str] = field(default_factory=list)  # "after <- before" judged legal
    # What the reducer needs: both sites, the earlier step's values of the later
    # instruction's operands and of the earlier instruction's operands, and its own value.
    site: Site | None = None
    counterpart_site: Site | None = None
    operand_keys: list[DynKey] = field(default_factory=list)
    counterpart_operand_keys: list[DynKey] = field(default_factory=list)
    values: dict[DynKey, LiteralValue] = field(default_factory=dict)
    shapes: dict[DynKey, Shape] = field(default_factory=dict)
    culprit_loops: tuple[int, ...] | None = None  # the loop iterations it departed in
    mlir: MlirCulprit | None = None  # the same for an MLIR culprit (`reduce_mlir`)
    partitions: tuple[int, ...] = ()  # the devices it departs on (per-device SPMD steps)

    @property
    def expected(self) -> LiteralValue | None:
        """The earlier step's value of the instruction (the reference of a reduction)."""
        if self.counterpart_site is None or self.culprit_loops is None:
            return None
        return self.values.get((self.counterpart_site.key, self.culprit_loops))

    @property
    def found(self) -> bool:
        return self.instruction is not None

    @property
    def summary(self) -> str:
        """One line: the culprit instruction and its source line, or why there is none."""
        ref = self.instruction
        if ref is None:
            return self.explanation
        source = f" ({ref.source})" if ref.source else ""
        op_name = f" {ref.op_name}" if ref.op_name else ""
        c = self.comparison
        numbers = ""
        if c is not None:
            numbers = f": max abs error {c.max_abs_error:.3g}"
            if c.bound is not None:
                numbers += f", bound {c.bound.bound:.3g}"
        devices = (f" on partition(s) {', '.join(map(str, self.partitions))}"
                   if self.partitions else "")
        inside = f"; changed inside: {ref.inside}" if ref.inside else ""
        return (f"{ref.name} ({ref.opcode}{op_name}) in {ref.computation}{source} departs from "
                f"{self.counterpart.name if self.counterpart else '?'}{devices} while its "
                f"operands agree{numbers}{inside}")


def describe(module: HloModule, site: Site, loops: tuple[int, ...]) -> InstructionRef:
    instruction = site.instruction
    metadata = instruction.metadata
    location = module.source_location(instruction)
    return InstructionRef(
        name=instruction.name, computation=site.computation.name, opcode=instruction.opcode,
        op_name=metadata.op_name if metadata is not None else "",
        source=f"{location[0]}:{location[1]}" if location else "",
        context=site.context_text(loops))


def _element(value: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        value = value[index]
    return np.asarray(value)


def differing_elements(before: LiteralValue, after: LiteralValue | None,
                       comparison: Comparison, truth: Truth | None,
                       limit: int = 5) -> list[ElementDiff]:
    """The first `limit` elements that differ by the comparison's own rule (each candidate
    element re-judged by `compare`, so the list never disagrees with the verdict)."""
    if after is None or comparison.problem is not None:
        return []
    path = comparison.first_element
    a, b = _element(before, path), _element(after, path)
    t = bound = None
    if truth is not None:
        t = _element(truth.value, path)
        bound = _element(truth.bound, path) if truth.bound is not None else None
    wide_a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    wide_b = b.astype(wide_a.dtype)
    with np.errstate(invalid="ignore"):
        differ = np.flatnonzero(~((wide_a == wide_b) | (np.isnan(wide_a) & np.isnan(wide_b))))
    found: list[ElementDiff] = []
    for flat in differ[:2000]:
        index = tuple(int(i) for i in np.unravel_index(int(flat), a.shape))
        part = None
        if t is not None and bound is not None:
            part = Truth(t[index], bound[index])
        if compare(a[index], b[index], truth=part).ok:
            continue
        found.append(ElementDiff(index, a[index].item(), b[index].item(),
                                 None if t is None else t[index].item(),
                                 None if bound is None else float(bound[index])))
        if len(found) == limit:
            break
    return found

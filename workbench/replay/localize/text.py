"""A localization in the user's words: the instruction's lines in the dumps, and English."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.model import Step
    from workbench.replay.localize.result import InstructionRef, Localization

NEIGHBOURS = 2  # lines shown on each side of the instruction
MAX_REWRITES = 10  # legal rewrites listed by name


def _definition(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*(?:ROOT\s+)?%?{re.escape(name)}\s*=")


def defines(line: str, name: str) -> bool:
    """Whether `line` of HLO text defines instruction `name`."""
    return _definition(name).match(line) is not None


def instruction_line(lines: list[str], name: str) -> int | None:
    """The 0-based line defining instruction `name` in an HLO text dump (`%name = ...`)."""
    pattern = _definition(name)
    for number, line in enumerate(lines):
        if pattern.match(line):
            return number
    return None


def _attach(lines: list[str], ref: InstructionRef) -> None:
    number = instruction_line(lines, ref.name)
    if number is None:
        return
    ref.line = number
    ref.text = lines[number].strip()
    first = number
    while first > 0 and number - first < NEIGHBOURS and lines[first - 1].startswith("  "):
        first -= 1
    last = number
    while (last + 1 < len(lines) and last - number < NEIGHBOURS
           and lines[last + 1].startswith("  ")):
        last += 1
    ref.neighbours = [line.rstrip() for line in lines[first:last + 1]]


def step_lines(root: Path, step: Step) -> list[str] | None:
    """The lines of a step's text dump, or None when it has none (a proto-only step)."""
    from workbench.loader import ReadError, read_text

    if step.text is None:
        return None
    try:
        return read_text(root, step.text).splitlines()
    except ReadError:
        return None


def attach_text(root: Path, result: Localization) -> None:
    """Fill in both instructions' lines and neighbours from the steps' text dumps."""
    for step, ref in ((result.after, result.instruction), (result.before, result.counterpart)):
        if ref is None:
            continue
        lines = step_lines(root, step)
        if lines is not None:
            _attach(lines, ref)


def _number(value: object) -> str:
    return f"{value:.7g}" if isinstance(value, float) else repr(value)


def localization_lines(result: Localization) -> list[str]:
    """The report `workbench localize` prints (and the TUI's log shows)."""
    header, culprit, texts, elements = _report_parts(result)
    return [*header, *culprit, *texts, *elements]


def finding_lines(result: Localization) -> list[str]:
    """The same report for a few lines of a screen: the culprit instruction, its source line
    and the values that differ first, then the rest of what is known of it, both versions'
    text and the counts."""
    header, culprit, texts, elements = _report_parts(result)
    source = [line for line in culprit[1:] if line.startswith("  source:")]
    rest = [line for line in culprit[1:] if line not in source]
    return [*culprit[:1], *source, *elements, *rest, *texts, *header]


def _report_parts(result: Localization
                  ) -> tuple[list[str], list[str], list[str], list[str]]:
    """The report's parts: the counts (and legal rewrites), the culprit instruction and what
    is known of it, both versions' text, the first differing elements."""
    from workbench.replay.judge.outcome import step_name

    header = [f"Localizing between {step_name(result.before)} and {step_name(result.after)}: "
              f"{result.matched} instructions matched, {len(result.unmatched)} without a "
              f"counterpart, {result.beyond_tolerance} values beyond the tolerance, "
              f"{result.departing} departing."]
    if result.legal_rewrites:
        more = len(result.legal_rewrites) - MAX_REWRITES
        header.append(f"{len(result.legal_rewrites)} rewrite(s) judged legal (within the "
                      "rounding error bound, or absorbed by a consumer that is):")
        header.extend(f"  {text}" for text in result.legal_rewrites[:MAX_REWRITES])
        if more > 0:
            header.append(f"  and {more} more")
    ref, other = result.instruction, result.counterpart
    if ref is None or other is None:
        return header, [f"no culprit instruction: {result.explanation}"], [], []
    culprit = [f"culprit instruction: {ref.name} ({ref.opcode}) in {ref.computation} "
               f"[{ref.context}]"]
    if result.partitions:
        culprit.append(f"  departs on partition(s) {', '.join(map(str, result.partitions))}")
    culprit.append(f"  op_name: {ref.op_name or '(none)'}")
    culprit.append(f"  source:  {ref.source or '(no source location in the metadata)'}")
    if ref.metadata_from:
        culprit.append(f"  (op_name and source borrowed from {ref.metadata_from}: the "
                       "instruction has none)")
    if ref.inside:
        culprit.append(f"  changed inside: {ref.inside}")
    if result.matched_by:
        culprit.append(f"  matched to {other.name} by {result.matched_by}")
    if result.comparison is not None:
        culprit.append(f"  {result.comparison.summary}")
    texts: list[str] = []
    for title, r in (("before the pass", other), ("after the pass", ref)):
        texts.append(f"{title} ({r.name} in {r.computation}):")
        if r.neighbours:
            texts.extend(("> " if line.strip() == r.text else "  ") + line
                         for line in r.neighbours)
        else:
            texts.append("  (no text dump of this step)")
    elements: list[str] = []
    if result.elements:
        elements.append("first differing elements (index: before | after | f64 truth | bound):")
        for e in result.elements:
            index = ",".join(str(i) for i in e.index)
            truth = "-" if e.truth is None else _number(e.truth)
            bound = "-" if e.bound is None else f"{e.bound:.3g}"
            elements.append(f"  [{index}]: {_number(e.before)} | {_number(e.after)} | {truth} "
                            f"| {bound}")
    return header, culprit, texts, elements

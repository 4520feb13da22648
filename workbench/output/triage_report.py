"""What a shared report of a triage or a bisection says, gathered from the results the core
computed: one `ReportEntry` per module x execution, read by the HTML report
(`html_report.py`) and the JUnit XML (`junit_xml.py`).

Nothing here renders: the entries hold the verdict, the culprit, each evaluated step's worst
error and bound (a plot's points), the error histogram at the culprit, the values that
differ, the IR diff of the culprit pass and the command to dig in, as plain data.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.replay.judge.compare import where_text
from workbench.replay.judge.outcome import Kind

if TYPE_CHECKING:
    from workbench.model import Module
    from workbench.replay.bisect import Verdict
    from workbench.replay.judge.compare import Comparison, ErrorHistogram
    from workbench.replay.judge.culprit import Culprit
    from workbench.replay.steps import StepResult
    from workbench.replay.triage.job import TriageResult

DIFF_LINES = 80  # the culprit pass's diff is cut to this many lines (the command shows all)


@dataclass(frozen=True)
class StepPoint:
    """One evaluated step on the pass timeline: its worst error and the rounding error bound
    it was judged against (None when the tolerance alone judged it), as a plot reads them."""

    index: int
    label: str
    status: str
    error: float | None  # None: no number (unsupported, an error, the reference itself)
    bound: float | None
    judged_by: str  # "error bound", "tolerance", or "" without a comparison


@dataclass(frozen=True)
class DifferingValue:
    """An element whose values differ, as the comparison recorded it."""

    what: str  # "first mismatch", "worst against its bound", "recorded result"
    where: str
    expected: str
    actual: str
    note: str = ""


@dataclass(frozen=True)
class DiffLine:
    mark: str  # " ", "-", "+" or "@" (a hunk header)
    text: str


@dataclass
class ReportEntry:
    """One module x execution of a report."""

    module: str
    name: str
    execution: str | None
    status: Kind
    detail: str
    steps: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    culprit: Culprit | None = None
    culprit_comparison: Comparison | None = None
    points: list[StepPoint] = field(default_factory=list)
    values: list[DifferingValue] = field(default_factory=list)
    diff: list[DiffLine] = field(default_factory=list)
    diff_note: str = ""  # why there is no diff, or what it leaves out
    command: str = ""  # the command that digs into this execution

    @property
    def title(self) -> str:
        return f"{self.module} ({self.name}) {self.execution or 'fake data'}"

    @property
    def errors(self) -> ErrorHistogram | None:
        return None if self.culprit_comparison is None else self.culprit_comparison.errors


def dig_command(root: Path, module: str, execution: str | None, status: Kind) -> str:
    """The exact command that shows this execution step by step."""
    words = ["workbench", "replay", str(root), module]
    words += ["--execution", execution] if execution is not None else ["--fake-data"]
    if status == Kind.MISMATCH:
        words.append("--print-changes-only")
    return shlex.join(words)


def step_point(result: StepResult) -> StepPoint:
    comparison = result.comparison
    if comparison is None or comparison.problem is not None:
        return StepPoint(result.step.index, result.step.label, result.status, None, None, "")
    check = comparison.bound
    # Without a bound the tolerance judged (atol + rtol * |expected| per element): no one
    # number to draw against the worst error, so none is drawn.
    error, bound = (check.error, check.bound) if check is not None else (
        comparison.max_abs_error, None)
    return StepPoint(result.step.index, result.step.label, result.status,
                     error if math.isfinite(error) else math.inf, bound, comparison.judged_by)


def differing_values(comparison: Comparison | None, recorded: Comparison | None
                     ) -> list[DifferingValue]:
    """The elements the comparisons name: the culprit's first mismatch and its worst element
    against the bound, and the recorded result's first difference from the reference."""
    values: list[DifferingValue] = []
    for what, c in (("culprit step", comparison), ("recorded result", recorded)):
        if c is None or c.ok:
            continue
        if c.problem is not None:
            values.append(DifferingValue(f"{what}: cannot compare", c.location, "", "",
                                         c.problem))
            continue
        values.append(DifferingValue(f"{what}: first mismatch", c.location,
                                     repr(c.expected_value), repr(c.actual_value),
                                     f"{c.mismatches} of {c.total} elements differ"))
        check = c.bound
        if check is not None:
            values.append(DifferingValue(
                f"{what}: worst against its bound", where_text(check.element, check.index),
                repr(check.truth), repr(check.actual),
                f"error {check.error:.3g}, bound {check.bound:.3g} ({check.ratio:.3g}x); "
                f"expected: the higher-precision value (the reference rounded: "
                f"{check.reference!r})"))
    return values


def culprit_diff(root: Path, module: Module, culprit: Culprit) -> tuple[list[DiffLine], str]:
    """The culprit pass's change, normalized as `workbench diff` normalizes it: the hunks
    that touch the culprit instruction when one is named, else the first ones, cut to
    `DIFF_LINES`; and a note of what was left out or why there is no diff."""
    from workbench.diff.render import hunk_header
    from workbench.diff.steps import diff_with_previous
    from workbench.sources import ReadError

    position = next((p for p, s in enumerate(module.steps) if s.index == culprit.index), None)
    if position is None:
        return [], f"step {culprit.index} is not in the module's timeline"
    try:
        found = diff_with_previous(root, module, position)
    except ReadError as error:
        return [], f"no diff: {error}"
    if found is None:
        return [], "no diff: the culprit step has no IR before it to compare with"
    hunks = found[0].hunks()
    if not hunks:
        return [], "the culprit pass left the IR unchanged modulo renumbering"
    name = culprit.instruction.name if culprit.instruction is not None else None
    touching = [h for h in hunks if name and any(name in line for line in h.text_lines())]
    chosen = touching or hunks
    lines: list[DiffLine] = []
    for hunk in chosen:
        lines.append(DiffLine("@", hunk_header(hunk)))
        lines += [DiffLine(text[:1], text[1:]) for text in hunk.text_lines()]
    note = ""
    if touching:
        note = f"the {len(touching)} of {len(hunks)} hunk(s) that touch {name}"
    if len(lines) > DIFF_LINES:
        note = (note + "; " if note else "") + f"first {DIFF_LINES} of {len(lines)} lines"
        lines = lines[:DIFF_LINES]
    return lines, note


def _diff_command(root: Path, module: str, culprit: Culprit) -> str:
    return shlex.join(["workbench", "diff", str(root), module, str(culprit.index)])


def entry_of_verdict(root: Path, shown: Path, module: Module, execution: str | None,
                     verdict: Verdict, culprit: Culprit | None,
                     seconds: float = 0.0) -> ReportEntry:
    """A report entry from a bisection's verdict (`bisect`, and each triage job); the dump is
    read at `root`, and named `shown` (as the user gave it) in the commands."""
    entry = ReportEntry(module.key, module.name, execution, verdict.status, verdict.detail,
                        steps=verdict.steps, evaluations=verdict.evaluations, seconds=seconds,
                        culprit=culprit,
                        culprit_comparison=(verdict.culprit.comparison
                                            if verdict.culprit is not None else None),
                        command=dig_command(shown, module.key, execution, verdict.status))
    reference = [] if verdict.reference is None else [verdict.reference.index]
    entry.points = [step_point(r) for r in sorted(verdict.results, key=lambda r: r.step.index)
                    if r.step.index not in reference]
    entry.values = differing_values(entry.culprit_comparison, verdict.recorded)
    if culprit is not None:
        entry.diff, entry.diff_note = culprit_diff(root, module, culprit)
        entry.diff_note = "; ".join(filter(None, [
            entry.diff_note, f"the whole diff: {_diff_command(shown, module.key, culprit)}"]))
    return entry


def entry_of_triage(root: Path, shown: Path, module: Module | None,
                    result: TriageResult) -> ReportEntry:
    """A report entry from one triage result (a verdict, or why there is none)."""
    if module is not None and result.verdict is not None:
        return entry_of_verdict(root, shown, module, result.execution, result.verdict,
                                result.culprit, result.seconds)
    return ReportEntry(result.module, result.name, result.execution, result.status,
                       result.detail, steps=result.steps, evaluations=result.evaluations,
                       seconds=result.seconds, culprit=result.culprit,
                       command=dig_command(shown, result.module, result.execution,
                                           result.status))

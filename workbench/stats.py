"""Statistics of a module's pipeline: IR size and op histograms per step, from the step's text,
and the compiler's own timing and pass-statistics reports joined to the steps.

Counting works on the printed IR line by line (no full parse), so a whole timeline of
6,000-line modules is counted in well under a second per hundred steps, and it works the same
for every producer: HLO text (`%name = shape opcode(...)`) and MLIR in custom or generic form
(`%0 = arith.addf ...`, `"arith.addf"(...)`, `func.return`).

Reports (`--mlir-timing`, `--mlir-pass-statistics`, read by workbench.formats.mlir_reports)
give each pass's wall time and `(S)` counters; `step_reports` says which row belongs to which
step.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from workbench.facts import FACTS, SMALL, FactKind
from workbench.formats.mlir_reports import (
    Reports,
    StatisticsNode,
    TimingNode,
    join_statistics,
    join_timing,
    module_reports,
)
from workbench.formats.mlir_text import OP_LINE
from workbench.formats.xla_buffers import (
    BufferAssignment,
    MemorySpace,
    read_buffer_assignment,
    read_memory_usage,
)
from workbench.model import IRKind, Module, Source, Step
from workbench.sources import ReadError, read_text


@dataclass(frozen=True)
class IrStats:
    """Size and op counts of one printed IR. `ops` maps an opcode (HLO) or op name (MLIR) to
    how often it occurs; `instructions` is their total; `regions` counts HLO computations or
    MLIR functions."""

    lines: int
    bytes: int
    instructions: int
    regions: int
    ops: dict[str, int] = field(default_factory=dict)


# An HLO instruction: `[ROOT ]%name = <shape> <opcode>(`; the shape may be a tuple with spaces.
_HLO_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*")
_HLO_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")
_HLO_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?[\w.\-]+\s.*\{\s*$")
_MLIR_FUNCTION = re.compile(r"^\s*(?:\"?func\.func\"?|func\.func|llvm\.func|util\.func)\b")


# Op counts of a step (or why its file could not be read), about 1.5 KB a step whatever its size.
IR_STATS: FactKind[IrStats | ReadError] = FactKind("ir-stats", SMALL, per_byte=0, fixed=1536)


def _skip_shape(line: str, start: int) -> int:
    """Index just past the HLO shape starting at `start` (balanced parentheses for tuples)."""
    if start < len(line) and line[start] == "(":
        depth = 0
        for index in range(start, len(line)):
            char = line[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    return index + 1
        return len(line)
    end = line.find(" ", start)
    return len(line) if end < 0 else end


def hlo_stats(text: str) -> IrStats:
    ops: Counter[str] = Counter()
    regions = 0
    lines = text.splitlines()
    for line in lines:
        match = _HLO_DEF.match(line)
        if match is None:
            if line.endswith("{") and _HLO_COMPUTATION.match(line) and "(" in line:
                regions += 1
            continue
        opcode = _HLO_OPCODE.match(line, _skip_shape(line, match.end()))
        if opcode is not None:
            ops[opcode.group(1)] += 1
    return IrStats(len(lines), len(text.encode()), sum(ops.values()), regions, dict(ops))


def mlir_stats(text: str) -> IrStats:
    ops: Counter[str] = Counter()
    regions = 0
    lines = text.splitlines()
    for line in lines:
        stripped = line.lstrip()
        if not stripped or stripped.startswith(("//", "#", "^", "}", "{-#")):
            continue
        match = OP_LINE.match(line)
        if match is not None:
            ops[match.group(1)] += 1
            if _MLIR_FUNCTION.match(line):
                regions += 1
        elif stripped.startswith("module"):
            ops["builtin.module"] += 1
    return IrStats(len(lines), len(text.encode()), sum(ops.values()), regions, dict(ops))


def ir_stats(text: str, ir: IRKind) -> IrStats:
    return hlo_stats(text) if ir == "hlo" else mlir_stats(text)


def step_stats(root: Path, step: Step) -> IrStats:
    """Stats of one step from its printed text, kept in the store of derived facts. Raises
    ReadError (no text, unreadable file)."""
    if step.text is None:
        raise ReadError(step.file or "?", "no printed IR for this step (proto only)")
    text = step.text
    found = FACTS.make(IR_STATS, root, [text], lambda: _count(root, text, step.ir),
                       params=(step.ir,))
    if isinstance(found, ReadError):
        raise ReadError(found.file, found.reason)
    return found


def known_step_stats(root: Path, step: Step) -> IrStats | ReadError | None:
    """Stats of a step if they are known for its file as it is now (why they are missing when
    the file could not be read); None when nobody has counted them yet. Reads no file."""
    if step.text is None:
        return None
    return FACTS.known(IR_STATS, root, [step.text], params=(step.ir,))


def _count(root: Path, source: Source, ir: IRKind) -> IrStats | ReadError:
    try:
        return ir_stats(read_text(root, source), ir)
    except ReadError as error:  # kept: the file stays unreadable until it changes
        return error


def op_delta(before: IrStats | None, after: IrStats) -> dict[str, int]:
    """Per-op count changes from `before` to `after` (ops whose count did not change omitted)."""
    old = before.ops if before else {}
    names = set(old) | set(after.ops)
    delta = {name: after.ops.get(name, 0) - old.get(name, 0) for name in names}
    return {name: change for name, change in sorted(delta.items()) if change}


@dataclass
class StepReports:
    """A module's reports, and for each step index its timing row and statistics entry (from
    the last report of each kind: a log of several compiles ends with the one that counts)."""

    reports: Reports
    timing: dict[int, TimingNode] = field(default_factory=dict)
    statistics: dict[int, StatisticsNode] = field(default_factory=dict)


def step_reports(root: Path, module: Module) -> StepReports:
    """Read the module's report artifacts and join them to its steps (problems are kept in
    `reports.problems`, never raised)."""
    reports = module_reports(root, module)
    joined = StepReports(reports)
    if reports.timing:
        joined.timing = join_timing(module.steps, reports.timing[-1])
    if reports.statistics:
        joined.statistics = join_statistics(module.steps, reports.statistics[-1])
    return joined


@dataclass
class ModuleReports:
    """A module's reports joined to its steps, XLA's memory summary and buffer assignment, and
    what could not be read of them (each as `file: reason`)."""

    module_key: str
    reports: StepReports | None = None
    memory: list[MemorySpace] = field(default_factory=list)
    buffers: BufferAssignment | None = None
    problems: list[str] = field(default_factory=list)


def read_module_reports(root: Path, module: Module) -> ModuleReports:
    """Read every report artifact of `module` (problems are kept, never raised)."""
    found = ModuleReports(module.key)
    found.reports = step_reports(root, module)
    found.problems += [f"{p.file}: {p.reason}" for p in found.reports.reports.problems]
    for artifact in module.artifacts:
        if artifact.kind not in ("memory-usage-report", "buffer-assignment"):
            continue
        try:
            text = read_text(root, Source(artifact.file))
            if artifact.kind == "memory-usage-report":
                found.memory = read_memory_usage(text, artifact.file)
            else:
                found.buffers = read_buffer_assignment(text, artifact.file)
        except ReadError as error:
            found.problems.append(str(error))
    return found

"""MLIR pass timing (`--mlir-timing`) and pass statistics (`--mlir-pass-statistics`) reports.

Both are printed between `===----===` rules with a title line (`... Execution time report ...`,
`... Pass statistics report ...`), alone in a file or inside a compiler's stderr. Each comes in
a pipeline view (passes nested under `'func.func' Pipeline` lines, two spaces a level) and a
list view (one flat entry per pass name). Timing rows are `  %8.4f (%5.1f%%)` per column (Wall
Time, and User Time when multi-threaded), then the name; `(A)` marks analyses; the last rows
are `Rest` and `Total` (MLIR's `Timing.cpp`). Statistics are `(S) <value> <name> - <description>`
under their pass (MLIR's `PassStatistics.cpp`).

A pass's report entries join to the steps it produced (`join_steps`), so a step shows its
pass's time and counters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.model import Module, Problem, Source, Step
from workbench.sources import ReadError, read_bytes

_RULE_RE = re.compile(r"^===-{8,}===?\s*$")
_TITLE_RE = re.compile(r"^\s*\.\.\. (?P<title>.+?) \.\.\.\s*$")
_TOTAL_RE = re.compile(r"^\s*Total Execution Time: (?P<seconds>-?\d+(?:\.\d+)?) seconds\s*$")
_COLUMNS_RE = re.compile(r"^\s*(?P<columns>(?:----[A-Za-z ]+----\s*)+)$")
_CELL = r"\s*(-?\d+\.\d+) \(\s*(-?\d+\.\d+)%\)"
_ROW_RE = re.compile(rf"^(?P<cells>(?:{_CELL})+)  (?P<indent> *)(?P<name>\S.*?)\s*$")
_CELL_RE = re.compile(_CELL)
_STAT_RE = re.compile(r"^(?P<indent> *)\(S\) +(?P<value>-?\d+) (?P<name>.+?) +- (?P<desc>.*?)\s*$")
_ENTRY_RE = re.compile(r"^(?P<indent> *)(?P<name>\S.*?)\s*$")

TIMING_TITLE = "Execution time report"
STATISTICS_TITLE = "Pass statistics report"


@dataclass
class TimingNode:
    """One row of a timing report: a pass, a pipeline, or an analysis `(A)`."""

    name: str
    wall_s: float | None
    user_s: float | None = None
    wall_percent: float | None = None  # as printed (MLIR computes it before rounding)
    user_percent: float | None = None
    analysis: bool = False
    depth: int = 0
    children: list[TimingNode] = field(default_factory=list)

    @property
    def pipeline(self) -> bool:
        return self.name.endswith(" Pipeline") or self.name.startswith("Pipeline Collection")


@dataclass
class TimingReport:
    """An execution time report; `line` is where its title is (1-based) in the file."""

    total_s: float
    columns: list[str]  # as printed: ["User Time", "Wall Time"] or ["Wall Time"]
    view: str  # "pipeline" or "list"
    roots: list[TimingNode] = field(default_factory=list)
    rest: TimingNode | None = None
    total: TimingNode | None = None
    line: int = 0

    def walk(self) -> Iterator[TimingNode]:
        """Every row in printed order (pre-order)."""
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass(frozen=True)
class Statistic:
    name: str
    value: int
    description: str


@dataclass
class StatisticsNode:
    """A pass (or a `'op' Pipeline`) of a statistics report, with its `(S)` counters."""

    name: str
    statistics: list[Statistic] = field(default_factory=list)
    depth: int = 0
    children: list[StatisticsNode] = field(default_factory=list)

    @property
    def pipeline(self) -> bool:
        return self.name.endswith(" Pipeline")


@dataclass
class StatisticsReport:
    view: str  # "pipeline" or "list"
    roots: list[StatisticsNode] = field(default_factory=list)
    line: int = 0

    def walk(self) -> Iterator[StatisticsNode]:
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


Report = TimingReport | StatisticsReport


@dataclass
class Reports:
    """The reports found in one file, in file order."""

    file: str
    timing: list[TimingReport] = field(default_factory=list)
    statistics: list[StatisticsReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def find_reports(text: str, file: str) -> Reports:
    """Every timing and statistics report in `text`; other lines are ignored."""
    found = Reports(file)
    lines = text.splitlines()
    i = 0
    while i + 2 < len(lines):
        title = _TITLE_RE.match(lines[i + 1])
        if not (_RULE_RE.match(lines[i]) and title and _RULE_RE.match(lines[i + 2])):
            i += 1
            continue
        body_start = i + 3
        if title["title"] == TIMING_TITLE:
            report, i = _read_timing(lines, body_start, file, found.problems)
            if report is not None:
                found.timing.append(report)
        elif title["title"] == STATISTICS_TITLE:
            statistics, i = _read_statistics(lines, body_start, file, found.problems)
            found.statistics.append(statistics)
        else:
            i = body_start
    return found


def _read_timing(lines: list[str], start: int, file: str,
                 problems: list[Problem]) -> tuple[TimingReport | None, int]:
    i = start
    total_s = None
    columns: list[str] | None = None
    while i < len(lines) and columns is None:
        line = lines[i]
        if match := _TOTAL_RE.match(line):
            total_s = float(match["seconds"])
        elif match := _COLUMNS_RE.match(line):
            columns = [c.strip("- ") for c in re.findall(r"----[A-Za-z ]+----", line)]
        elif line.strip() and total_s is None:
            break
        i += 1
    if total_s is None or columns is None:
        problems.append(Problem(file, f"timing report at line {start - 1} has no "
                                      "'Total Execution Time' and column header"))
        return None, i
    names = [c for c in columns if c != "Name"]
    report = TimingReport(total_s, names, "list", line=start - 1)
    stack: list[TimingNode] = []
    while i < len(lines):
        row = _ROW_RE.match(lines[i])
        if row is None:
            break
        i += 1
        cells = [(float(m.group(1)), float(m.group(2)))
                 for m in _CELL_RE.finditer(row["cells"])]
        if len(cells) != len(names):
            problems.append(Problem(file, f"timing row at line {i} has {len(cells)} "
                                          f"columns, the header {len(names)}"))
            continue
        by_column = dict(zip(names, cells, strict=True))
        wall = by_column.get("Wall Time", (None, None))
        user = by_column.get("User Time", (None, None))
        name = row["name"]
        depth = len(row["indent"]) // 2
        analysis = name.startswith("(A) ")
        node = TimingNode(name[4:] if analysis else name, wall[0], user[0], wall[1], user[1],
                          analysis, depth)
        if depth == 0 and name in ("Rest", "Total"):
            setattr(report, name.lower(), node)
            continue
        while stack and stack[-1].depth >= depth:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        else:
            report.roots.append(node)
        stack.append(node)
    if any(node.depth for node in report.walk()):
        report.view = "pipeline"
    if report.total is None:
        if i < len(lines) and lines[i].strip():
            problems.append(Problem(file, f"timing report at line {start - 1}: line {i + 1} is "
                                          f"not a row ({lines[i].strip()[:80]!r}); the rows "
                                          "after it are left out"))
        else:
            problems.append(Problem(file, f"timing report at line {start - 1} ends without "
                                          "its 'Total' row (cut short?)"))
    return report, i


def _read_statistics(lines: list[str], start: int, file: str,
                     problems: list[Problem]) -> tuple[StatisticsReport, int]:
    entries: list[tuple[int, str]] = []  # (indent, name) of passes
    stats: list[tuple[int, Statistic]] = []  # (entry index, statistic)
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _RULE_RE.match(line):
            break
        if match := _STAT_RE.match(line):
            if entries:
                stats.append((len(entries) - 1, Statistic(match["name"], int(match["value"]),
                                                          match["desc"])))
        elif line.lstrip().startswith("(S)"):  # a damaged counter is no pass name
            problems.append(Problem(file, f"statistics report at line {start - 1}: line "
                                          f"{i + 1} is not a statistic ({line.strip()[:80]!r})"))
        elif match := _ENTRY_RE.match(line):
            entries.append((len(match["indent"]), match["name"]))
        i += 1
    base = min((indent for indent, _ in entries), default=0)
    report = StatisticsReport("list" if base > 0 else "pipeline", line=start - 1)
    nodes = [StatisticsNode(name, depth=(indent - base) // 2) for indent, name in entries]
    for index, statistic in stats:
        nodes[index].statistics.append(statistic)
    stack: list[StatisticsNode] = []
    for node in nodes:
        while stack and stack[-1].depth >= node.depth:
            stack.pop()
        (stack[-1].children if stack else report.roots).append(node)
        stack.append(node)
    return report, i


def render_timing_rows(report: TimingReport) -> list[str]:
    """The report's rows as MLIR prints them (checks that a parse kept every row)."""
    order = [c for c in ("User Time", "Wall Time") if c in report.columns]
    rows = list(report.walk()) + [n for n in (report.rest, report.total) if n is not None]
    out = []
    for node in rows:
        cells = ""
        for column in order:
            if column == "User Time":
                value, percent = node.user_s, node.user_percent
            else:
                value, percent = node.wall_s, node.wall_percent
            cells += f"  {value or 0.0:8.4f} ({percent or 0.0:5.1f}%)"
        name = f"(A) {node.name}" if node.analysis else node.name
        out.append(f"{cells}  {'  ' * node.depth}{name}")
    return out


# --- joining reports to steps --------------------------------------------------------------

_JOINABLE_KINDS = ("pass", "pass-failed")


def _op_of(label: str | None) -> str | None:
    return label.split(" @", 1)[0] if label else None


def _join(steps: Sequence[Step], names: list[str], parents: list[int]) -> dict[int, int]:
    """Match steps (in run order) to report entries (in pipeline order) by pass name.

    Moves forward through the pipeline; when the same nested pipeline runs again on another
    operation of the same kind (`func.func @a`, then `func.func @b`), it restarts at the
    entries of that nested pipeline.
    """
    matched: dict[int, int] = {}
    position = 0
    last: int | None = None
    last_target: str | None = None
    for step in steps:
        if step.kind not in _JOINABLE_KINDS:
            continue
        found = None
        if (last is not None and step.target != last_target
                and _op_of(step.target) == _op_of(last_target)):
            group = parents[last]
            found = next((j for j in range(len(names))
                          if parents[j] == group and names[j] == step.pass_name), None)
        if found is None:
            found = next((j for j in range(position, len(names)) if names[j] == step.pass_name),
                         None)
        if found is None:
            continue
        matched[step.index] = found
        position, last, last_target = found + 1, found, step.target
    return matched


def _flatten(roots: Sequence[TimingNode | StatisticsNode]) -> tuple[list, list[int]]:
    nodes: list = []
    parents: list[int] = []
    stack: list[tuple[TimingNode | StatisticsNode, int]] = [
        (root, -1) for root in reversed(roots)]
    while stack:
        node, parent = stack.pop()
        index = len(nodes)
        nodes.append(node)
        parents.append(parent)
        children: Sequence[TimingNode | StatisticsNode] = node.children
        stack.extend((child, index) for child in reversed(children))
    return nodes, parents


def join_timing(steps: Sequence[Step], report: TimingReport) -> dict[int, TimingNode]:
    """Step index -> the timing row of the pass that produced it (pipeline view)."""
    nodes, parents = _flatten(report.roots)
    names = [n.name if not (n.analysis or n.pipeline) else "" for n in nodes]
    if report.view == "list":
        by_name = {n.name: n for n in nodes if not n.analysis}
        return {s.index: by_name[s.pass_name] for s in steps
                if s.kind in _JOINABLE_KINDS and s.pass_name in by_name}
    return {index: nodes[j] for index, j in _join(steps, names, parents).items()}


def join_statistics(steps: Sequence[Step],
                    report: StatisticsReport) -> dict[int, StatisticsNode]:
    """Step index -> the statistics entry of the pass that produced it."""
    nodes, parents = _flatten(report.roots)
    if report.view == "list":
        by_name = {n.name: n for n in nodes}
        return {s.index: by_name[s.pass_name] for s in steps
                if s.kind in _JOINABLE_KINDS and s.pass_name in by_name}
    names = [n.name if not n.pipeline else "" for n in nodes]
    return {index: nodes[j] for index, j in _join(steps, names, parents).items()}


def apply_timing(steps: Sequence[Step], reports: Reports) -> None:
    """Fill `Step.timing_s` (wall time of the pass at that pipeline position) from a report.

    Both dumps of a Before/After pair get the time. When a log holds several timing reports
    (several compiles), the last one is used.
    """
    if not reports.timing:
        return
    joined = join_timing(steps, reports.timing[-1])
    for step in steps:
        node = joined.get(step.index)
        if node is not None and node.wall_s is not None:
            step.timing_s = node.wall_s
            if step.pair is not None:
                steps[step.pair].timing_s = node.wall_s


def module_reports(root: Path, module: Module) -> Reports:
    """Every report in the module's `mlir-reports` artifacts (bad files become problems)."""
    found = Reports(module.id)
    for artifact in module.artifacts:
        if artifact.kind != "mlir-reports":
            continue
        try:
            text = read_bytes(root, Source(artifact.file)).decode("utf-8", "replace")
        except ReadError as error:
            found.problems.append(Problem(error.file, error.reason))
            continue
        reports = find_reports(text, artifact.file)
        found.timing += reports.timing
        found.statistics += reports.statistics
        found.problems += reports.problems
    return found


def step_statistics(root: Path, module: Module, step: Step) -> list[Statistic]:
    """The `(S)` counters of the pass that produced `step`, from the module's statistics
    report (its pipeline position in a pipeline view, its name in a list view); [] when no
    report has it. A Before dump gets those of its After dump's pass.

    Only print-ir logs are joined: their dumps follow the pipeline the report describes. An
    IR tree also holds the runs of passes' own nested pipelines (fixed-point iterations,
    the inliner's canonicalizations), which the report folds together, so it gets [].
    """
    if module.format != "mlir-print-ir":
        return []
    if step.kind == "before-pass" and step.pair is not None:
        step = module.steps[step.pair]
    reports = module_reports(root, module)
    if not reports.statistics:
        return []
    node = join_statistics(module.steps, reports.statistics[-1]).get(step.index)
    return list(node.statistics) if node is not None else []

"""Statistics pane: counts across the pipeline, the selected step's op histogram and its
change, the compiler's timing and pass-statistics reports, XLA's memory summary.

Counts come from the step facts the timeline computes (workbench.step_facts); reports and
memory reports are read (workbench.stats.read_module_reports) in a thread worker once per
module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Sparkline, Tree
from textual.widgets.tree import TreeNode

from workbench.formats.mlir_reports import StatisticsNode, TimingNode
from workbench.formats.xla_buffers import human_bytes
from workbench.model import Module, Step
from workbench.stats import IrStats, ModuleReports, op_delta, read_module_reports
from workbench.tui.data_widgets import DataStatic, DataTree
from workbench.tui.panes.base import Pane
from workbench.tui.step_names import step_name

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext

TOP_OPS = 16  # ops listed in the histogram (the rest are summed up)
BAR_WIDTH = 12


def histogram_text(stats: IrStats, before: IrStats | None) -> Text:
    """`op  count  Δ  ████` lines, most frequent first; Δ against the step before."""
    text = Text()
    delta = op_delta(before, stats) if before is not None else {}
    names = sorted(set(stats.ops) | set(delta), key=lambda n: (-stats.ops.get(n, 0), n))
    shown = names[:TOP_OPS]
    width = max((len(n) for n in shown), default=0)
    peak = max(stats.ops.values(), default=1)
    for name in shown:
        count = stats.ops.get(name, 0)
        change = delta.get(name, 0)
        text.append(f"{name:<{width}} {count:>5} ")
        text.append(f"{change:+4d} " if change else "     ",
                    style="bold" if change else "")
        text.append("█" * max(1 if count else 0, count * BAR_WIDTH // peak), style="dim")
        text.append("\n")
    if len(names) > TOP_OPS:
        rest = sum(stats.ops.get(n, 0) for n in names[TOP_OPS:])
        text.append(f"… {len(names) - TOP_OPS} more ops, {rest} instructions\n", style="dim")
    text.rstrip()
    return text


def timing_label(node: TimingNode) -> str:
    wall = f"{node.wall_s * 1000:.2f}ms" if node.wall_s is not None else "—"
    percent = f" {node.wall_percent:.1f}%" if node.wall_percent is not None else ""
    return f"{node.name}  {wall}{percent}{'  (analysis)' if node.analysis else ''}"


ReportNode = TimingNode | StatisticsNode


def add_report_node(parent: TreeNode[ReportNode], node: ReportNode) -> None:
    """One row of a report; its children are added when it is first expanded (an IREE
    compile's timing report has thousands of rows)."""
    if isinstance(node, TimingNode):
        if node.children:
            parent.add(timing_label(node), data=node).allow_expand = True
        else:
            parent.add_leaf(timing_label(node), data=node)
        return
    if node.children or node.statistics:
        parent.add(node.name, data=node).allow_expand = True
    else:
        parent.add_leaf(node.name, data=node)


def expand_report_node(tree_node: TreeNode[ReportNode]) -> None:
    node = tree_node.data
    if node is None or tree_node.children:
        return
    if isinstance(node, StatisticsNode):
        for statistic in node.statistics:
            tree_node.add_leaf(f"(S) {statistic.value} {statistic.name} — "
                               f"{statistic.description}")
    for child in node.children:
        add_report_node(tree_node, child)


class StatsPane(Pane):
    TITLE = "Stats"
    KEY = "7"
    HELP = ("Instruction counts across the pipeline (a sparkline, one column per step), the "
            "op histogram of the selected step with the change from the step before, the "
            "selected pass's time and (S) counters when the compiler reported them, the "
            "timing and statistics reports as trees, and XLA's memory and buffer summary.")

    class Read(Message):
        def __init__(self, found: ModuleReports) -> None:
            super().__init__()
            self.found = found

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.step: Step | None = None
        self.found: ModuleReports | None = None
        self.summary = DataStatic("", id="stats-summary")
        self.sparkline = Sparkline([], id="stats-sparkline")
        self.ops = DataStatic("", id="stats-ops")
        self.step_report = DataStatic("", id="stats-step-report")
        self.memory = DataStatic("", id="stats-memory")
        self.report_tree: Tree[ReportNode] = DataTree("reports", id="stats-reports")
        self.stale = False  # the module changed while the pane was not showing
        self.scroll = VerticalScroll(id="stats-scroll", can_focus=True)

    def compose(self) -> ComposeResult:
        with self.scroll:
            yield self.summary
            yield self.sparkline
            yield self.ops
            yield self.step_report
            yield self.memory
            yield self.report_tree

    def focus_target(self) -> Widget:
        return self.scroll

    # ----- hooks ------------------------------------------------------------------------------

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        self.module = module
        self.found = None
        self.memory.update("")
        self.report_tree.clear()
        self.report_tree.display = False
        self.stale = True
        self.shown(app)

    def shown(self, app: PaneContext) -> None:
        if not self.showing or not self.stale:
            return
        self.stale = False
        if self.module is not None:
            self.read_reports(app, self.module)
        self.redraw()

    def step_selected(self, app: PaneContext, module: Module, step: Step | None) -> None:
        self.step = step
        if self.showing:
            self.redraw()

    def facts_changed(self, app: PaneContext, module_key: str) -> None:
        if self.showing and self.module is not None and self.module.key == module_key:
            self.redraw()

    # ----- drawing ----------------------------------------------------------------------------

    def redraw(self) -> None:
        module, step = self.module, self.step
        if module is None:
            self.summary.update("select a module")
            self.sparkline.data = []
            self.ops.update("")
            self.step_report.update("")
            return
        facts = self.context.step_facts
        ir = step.ir if step is not None else (module.steps[-1].ir if module.steps else "hlo")
        counted = [(s, facts(s).stats) for s in module.steps if s.ir == ir]
        counts = [st.instructions for _, st in counted if isinstance(st, IrStats)]
        self.sparkline.data = counts
        lines = Text()
        if counts:
            lines.append(f"instructions across {len(counts)} {ir.upper()} steps: "
                         f"{counts[0]} → {counts[-1]} (min {min(counts)}, max {max(counts)})")
        else:
            lines.append("counting…" if module.steps else "no steps", style="dim")
        if step is not None:
            stats = facts(step).stats
            lines.append(f"\n{step_name(step)}: ", style="bold")
            if isinstance(stats, IrStats):
                lines.append(f"{stats.instructions} instructions, {stats.lines} lines, "
                             f"{human_bytes(stats.bytes)}, {stats.regions} computations")
                previous = next((s for s in reversed(module.steps[: step.index])
                                 if s.ir == step.ir), None)
                before = facts(previous).stats if previous is not None else None
                self.ops.update(histogram_text(stats, before if isinstance(before, IrStats)
                                               else None))
            else:
                lines.append(str(stats) if stats is not None else "counting…", style="dim")
                self.ops.update("")
        self.summary.update(lines)
        self.step_report.update(self._step_report_text())

    def _step_report_text(self) -> Text:
        text = Text()
        found, step = self.found, self.step
        if found is None or found.reports is None or step is None:
            return text
        timing = found.reports.timing.get(step.index)
        statistics = found.reports.statistics.get(step.index)
        if timing is not None:
            text.append(f"timing: {timing_label(timing)}\n")
        if statistics is not None:
            for statistic in statistics.statistics:
                text.append(f"(S) {statistic.value} {statistic.name}\n")
        text.rstrip()
        return text

    # ----- reports ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="stats-reports", exit_on_error=False)
    def read_reports(self, app: PaneContext, module: Module) -> None:
        self.post_message(self.Read(read_module_reports(app.dump.root, module)))

    def on_stats_pane_read(self, event: Read) -> None:
        found = event.found
        if self.module is None or found.module_key != self.module.key:
            return
        self.found = found
        self.memory.update(self._memory_text(found))
        self.report_tree.clear()
        reports = found.reports.reports if found.reports else None
        if reports is not None and (reports.timing or reports.statistics):
            self.report_tree.display = True
            self.report_tree.root.expand()
            if reports.timing:
                timing = reports.timing[-1]
                branch = self.report_tree.root.add(f"timing: total {timing.total_s:.4f}s "
                                                   f"({timing.view} view)", expand=True)
                for node in timing.roots:
                    add_report_node(branch, node)
            if reports.statistics:
                branch = self.report_tree.root.add(
                    f"pass statistics ({reports.statistics[-1].view} view)", expand=True)
                for statistics_node in reports.statistics[-1].roots:
                    add_report_node(branch, statistics_node)
        self.step_report.update(self._step_report_text())

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[ReportNode]) -> None:
        expand_report_node(event.node)

    def _memory_text(self, found: ModuleReports) -> Text:
        text = Text()
        if found.memory or found.buffers:
            text.append("memory\n", style="bold")
        for space in found.memory:
            text.append(f"  {space.name} (color {space.color}): "
                        f"{human_bytes(space.total_bytes)}\n")
        if found.buffers is not None:
            buffers = found.buffers
            text.append(f"  {len(buffers.allocations)} allocations, "
                        f"{human_bytes(buffers.total_bytes)}\n")
            for role, (count, size) in buffers.by_role().items():
                text.append(f"    {role:<18} {count:>4}  {human_bytes(size):>10}\n")
            text.append("  largest:\n")
            for allocation in buffers.largest(3):
                names = ", ".join(allocation.values[:3]) + (
                    "…" if len(allocation.values) > 3 else "")
                text.append(f"    #{allocation.index} {human_bytes(allocation.size)} "
                            f"{allocation.role}: {names}\n")
        for problem in found.problems:
            text.append(f"  {problem}\n", style="italic")
        text.rstrip()
        return text

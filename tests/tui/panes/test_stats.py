"""Statistics pane: counts across the pipeline, histogram with delta, reports, memory."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.stats import IrStats
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.stats import StatsPane
from workbench.tui.panes.timeline import TimelinePane


def test_counts_histogram_and_memory_of_jit_ln(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        app.pane(TimelinePane).table.move_to(30)  # 0028 fusion
        await wait(pilot)
        await pilot.press("7")
        await wait(pilot)
        pane = app.pane(StatsPane)
        assert app.module is not None
        hlo_steps = [s for s in app.module.steps if s.ir == "hlo"]
        stats = [app.step_facts(s).stats for s in hlo_steps]
        counts = [st.instructions for st in stats if isinstance(st, IrStats)]
        assert pane.sparkline.data == counts and len(counts) == 38
        summary = str(pane.summary.render())
        assert f"{counts[0]} → {counts[-1]}" in summary
        assert "#30 fusion in HLO_passes_after_layout_assignment: 44 instructions" in summary
        ops = str(pane.ops.render()).splitlines()
        rows = {line.split()[0]: line.split()[1:] for line in ops}
        assert rows["fusion"][:2] == ["2", "+2"]
        assert rows["sqrt"][:2] == ["1", "+1"] and rows["rsqrt"][:2] == ["0", "-1"]
        memory = str(pane.memory.render())
        assert "default (color 0): 564 B" in memory and "12 allocations" in memory
        assert "output" in memory and "broadcast_add_fusion" in memory
        assert not pane.report_tree.display  # no MLIR reports for an XLA module

    drive(app, scenario)


def test_mlir_reports_as_trees(corpus: Path, drive, wait) -> None:
    app = WorkbenchApp(corpus / "mlir" / "iree-opt-to-loops", watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("t", "slash", *"after-change", "enter")
        await wait(pilot)
        assert app.module is not None and app.module.key == "print-ir-after-change.log"
        pane = app.pane(StatsPane)
        assert pane.found is None  # nothing read while the tab is not showing
        await pilot.press("7")
        await wait(pilot)
        tree = pane.report_tree
        assert tree.display
        labels = [str(node.label) for node in tree.root.children]
        assert labels[0].startswith("timing: total") and "pipeline view" in labels[0]
        assert labels[1].startswith("pass statistics")
        timing = tree.root.children[0]
        flattened = []
        stack = list(timing.children)
        while stack:  # children are added as nodes expand: open them all
            node = stack.pop()
            flattened.append(str(node.label))
            if node.allow_expand and not node.children:
                node.expand()
                await pilot.pause()
            stack.extend(node.children)
        assert any(label.startswith("CSEPass") for label in flattened)
        assert len(flattened) == sum(1 for _ in pane.found.reports.reports.timing[-1].walk())  # type: ignore[union-attr]  # set by now: the line before waited for it
        step_text = str(pane.step_report.render())
        assert step_text.startswith("timing: ") and "ms" in step_text

    drive(app, scenario)

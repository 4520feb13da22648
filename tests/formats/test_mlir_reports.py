"""Timing and statistics reports of the corpus: totals, trees, views, joins to steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.formats.mlir_print_ir import dumps_to_steps, scan_print_ir
from workbench.formats.mlir_reports import (
    find_reports,
    join_statistics,
    join_timing,
    render_timing_rows,
)

ROW = re.compile(r"^\s+-?\d+\.\d+ \(")


@pytest.fixture(scope="module")
def mlir(corpus: Path) -> Path:
    return corpus / "mlir"


@pytest.mark.parametrize(
    ("file", "total", "view", "columns"),
    [
        ("iree-compile-jit_f/compile.log", 1.6664, "pipeline", ["Wall Time"]),
        ("iree-opt-list-reports/reports-list.log", 0.7054, "list", ["User Time", "Wall Time"]),
        ("iree-opt-list-reports/timing-threaded.log", 0.6889, "pipeline",
         ["User Time", "Wall Time"]),
        ("iree-opt-to-loops/print-ir-after-change.log", 0.0356, "pipeline", ["Wall Time"]),
    ],
)
def test_timing_totals_and_same_tree(mlir: Path, file: str, total: float, view: str,
                                     columns: list[str]) -> None:
    text = (mlir / file).read_text()
    reports = find_reports(text, file)
    assert reports.problems == []
    (timing,) = reports.timing
    assert timing.total_s == total
    assert timing.total is not None and timing.total.wall_s == total
    assert timing.view == view
    assert timing.columns == columns
    # printing the parsed tree back gives the report's rows, in order, indentation included
    assert render_timing_rows(timing) == [line for line in text.splitlines() if ROW.match(line)]


def test_pipeline_tree_shape(mlir: Path) -> None:
    (timing,) = find_reports((mlir / "iree-compile-jit_f/compile.log").read_text(), "c").timing
    module = timing.roots[1]
    assert module.name == "'builtin.module' Pipeline" and module.pipeline
    assert module.wall_s == 0.3160
    assert [c.name for c in module.children[:4]] == [
        "CheckVHLOStableHloMixUsage", "VhloToVersionPass", "VhloLegalizeToStablehloPass",
        "'func.func' Pipeline"]
    cse = module.children[3].children[5]
    assert cse.name == "CSEPass"
    assert [(a.name, a.analysis) for a in cse.children] == [("DominanceInfo", True)]
    assert timing.rest is not None and timing.rest.wall_s == -2.4942


def test_threaded_user_time(mlir: Path) -> None:
    text = (mlir / "iree-opt-list-reports/timing-threaded.log").read_text()
    (timing,) = find_reports(text, "t").timing
    assert timing.total.user_s == 1.4341
    assert sum(1 for n in timing.walk() if n.analysis) == 68


def test_statistics_pipeline_view(mlir: Path) -> None:
    text = (mlir / "iree-compile-jit_f/compile.log").read_text()
    (stats,) = find_reports(text, "c").statistics
    assert stats.view == "pipeline"
    dce = [n for n in stats.walk() if n.name == "SymbolDCEPass"]
    assert [n.statistics[0].value for n in dce] == [0, 0, 0, 0, 0, 0, 40, 0, 0]
    assert dce[0].statistics[0].name == "num-dce'd"
    assert dce[0].statistics[0].description == "Number of symbols DCE'd"
    fold = next(n for n in stats.walk() if n.name == "FoldGlobalsPass")
    assert [(s.name, s.value) for s in fold.statistics] == [
        ("global ops after folding", 1), ("global ops before folding", 0)]
    nested = next(n for n in stats.walk() if n.name == "'flow.executable' Pipeline")
    assert [c.name for c in nested.children] == ["StripDebugOpsPass"]


def test_statistics_list_view(mlir: Path) -> None:
    text = (mlir / "iree-opt-list-reports/reports-list.log").read_text()
    (stats,) = find_reports(text, "r").statistics
    assert stats.view == "list"
    assert [n.name for n in stats.roots] == [
        "CSEPass", "ElideAsyncCopiesPass", "FoldGlobalsPass", "SymbolDCEPass"]
    assert [(s.name, s.value) for s in stats.roots[2].statistics] == [
        ("global ops after folding", 20), ("global ops before folding", 0)]


def test_reports_join_steps_of_the_same_log(mlir: Path) -> None:
    file = "iree-opt-to-loops/print-ir-after-change.log"
    data = (mlir / file).read_bytes()
    steps = dumps_to_steps(scan_print_ir(data, file))
    reports = find_reports(data.decode(), file)
    timing = join_timing(steps, reports.timing[0])
    assert [timing[s.index].wall_s for s in steps] == [0.0050, 0.0001, 0.0012, 0.0073,
                                                       0.0003, 0.0054]
    statistics = join_statistics(steps, reports.statistics[0])
    cse = statistics[steps[1].index]
    assert cse.name == "CSEPass"
    assert [(s.name, s.value) for s in cse.statistics] == [("num-cse'd", 3), ("num-dce'd", 0)]
    bufferize = statistics[steps[4].index]
    assert bufferize.statistics[1].name == "num-tensor-in-place"
    assert bufferize.statistics[1].value == 10


def test_truncated_timing_report_is_a_problem(mlir: Path) -> None:
    text = (mlir / "iree-opt-list-reports/timing-threaded.log").read_text()
    cut = text[: len(text) // 2]
    reports = find_reports(cut, "cut.log")
    (timing,) = reports.timing
    assert timing.total is None
    assert any("cut short" in p.reason for p in reports.problems)
    assert find_reports("\x00garbage\n===---\n", "g").timing == []


def test_step_statistics_through_the_index(mlir: Path) -> None:
    from workbench.formats.mlir_reports import step_statistics
    from workbench.index import scan

    dump = scan(mlir / "iree-opt-to-loops")
    module = dump.find_module("print-ir-after-change.log")
    counters = {s.pass_name: [(x.name, x.value) for x in step_statistics(dump.root, module, s)]
                for s in module.steps}
    assert counters["CSEPass"] == [("num-cse'd", 3), ("num-dce'd", 0)]
    assert counters["OneShotBufferizePass"] == [("num-buffer-alloc", 2),
                                                ("num-tensor-in-place", 10),
                                                ("num-tensor-out-of-place", 0)]
    assert counters["ConvertLinalgToLoopsPass"] == []
    other = dump.find_module("print-ir-before-after-module-scope.log")
    assert step_statistics(dump.root, other, other.steps[0]) == []  # no report in that log

"""`workbench report FILE`: MLIR pass timing and statistics reports as tables or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.formats.mlir_reports import (
    StatisticsReport,
    TimingReport,
    find_reports,
)
from workbench.model import Source
from workbench.output.json_shapes import print_json, report_json
from workbench.sources import ReadError, read_bytes

if TYPE_CHECKING:
    from rich.console import Console, JustifyMethod


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="show MLIR pass timing (--mlir-timing) and statistics reports")
    parser.add_argument("file", type=Path, help="a report, or a log with reports in it")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path: Path = args.file
    try:
        data = read_bytes(path.parent, Source(path.name))
    except ReadError as error:
        print(f"workbench report: {error}", file=sys.stderr)
        return 2
    reports = find_reports(data.decode("utf-8", "replace"), str(path))
    if args.json:
        print_json(report_json(str(path), reports))
        return 0
    from workbench.output.safe_text import markup, terminal_console

    console = terminal_console(highlight=False)
    if not reports.timing and not reports.statistics:
        console.print(f"{markup(str(path))}: no timing or statistics report found",
                      soft_wrap=True)
    for statistics in reports.statistics:
        _print_statistics(console, statistics)
    for timing in reports.timing:
        _print_timing(console, timing)
    for problem in reports.problems:
        console.print(f"[red]problem[/]: {markup(problem.reason)}")
    return 0 if not reports.problems else 1


def _print_timing(console: Console, report: TimingReport) -> None:
    from rich.table import Table

    from workbench.output.safe_text import markup

    table = Table(title=f"Execution time ({report.view} view, line {report.line}): "
                        f"total {report.total_s:.4f} s", title_justify="left")
    for column in report.columns:
        table.add_column(column, justify="right")
        table.add_column("%", justify="right")
    table.add_column("name")
    rows = list(report.walk()) + [n for n in (report.rest, report.total) if n is not None]
    for node in rows:
        cells = []
        for column in report.columns:
            value, percent = ((node.user_s, node.user_percent) if column == "User Time"
                              else (node.wall_s, node.wall_percent))
            cells += [f"{value:.4f}" if value is not None else "",
                      f"{percent:.1f}" if percent is not None else ""]
        name = f"(A) {node.name}" if node.analysis else node.name
        style = "dim" if node.analysis else ("bold" if node.pipeline else "")
        label = f"[{style}]{markup(name)}[/]" if style else markup(name)
        table.add_row(*cells, "  " * node.depth + label)
    console.print(table)


def _print_statistics(console: Console, report: StatisticsReport) -> None:
    from rich.table import Table

    from workbench.output.safe_text import markup

    table = Table(title=f"Pass statistics ({report.view} view, line {report.line})",
                  title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("pass", "left"), ("value", "right"), ("statistic", "left"), ("description", "left"))
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for node in report.walk():
        indent = "  " * node.depth
        if not node.statistics:
            table.add_row(indent + markup(node.name), "", "", "")
        for i, statistic in enumerate(node.statistics):
            table.add_row(indent + markup(node.name) if i == 0 else "", str(statistic.value),
                          markup(statistic.name), markup(statistic.description))
    console.print(table)

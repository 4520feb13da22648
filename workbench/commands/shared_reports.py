"""`--html FILE` and `--junit-xml FILE` of `triage` and `bisect`: the results as a report a
colleague opens in a browser and as the JUnit XML a CI system shows.

Both paths are checked before anything is evaluated (never inside the dump, never over an
input; an existing report file is replaced) and the HTML report's libraries too, so a long
triage does not end in an error; the files are written atomically after the verdicts.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.output.triage_report import ReportEntry


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help="also write a self-contained HTML report (verdicts, culprit, "
                        "plots, the culprit pass's diff); needs the report extra")
    parser.add_argument("--junit-xml", type=Path, metavar="FILE",
                        help="also write the results as JUnit XML (one test case per module "
                        "x execution) for a CI system")


def check_report_arguments(args: argparse.Namespace, dump: Path) -> str | None:
    """Why the report files cannot be written (None: they can)."""
    from workbench.destinations import RefusedDestination, check_file

    try:
        if args.html is not None:
            from workbench.output.html_report import ReportUnavailable, require_report_libraries

            try:
                require_report_libraries()
            except ReportUnavailable as error:
                return str(error)
            check_file(args.html, "--html", dumps=[dump], inputs=[dump], force=True)
        if args.junit_xml is not None:
            check_file(args.junit_xml, "--junit-xml", dumps=[dump], inputs=[dump], force=True)
    except RefusedDestination as error:
        return str(error)
    if args.html is not None and args.junit_xml is not None and \
            args.html.resolve() == args.junit_xml.resolve():
        return "--html and --junit-xml name the same file"
    return None


def write_reports(args: argparse.Namespace, title: str, root: Path, command: str,
                  entries: list[ReportEntry]) -> None:
    """Write what `--html` and `--junit-xml` ask for; a failed write raises OutputError."""
    from workbench.destinations import write_file_atomically

    if args.html is not None:
        from workbench.output.html_report import render_html

        html = render_html(title, str(root), command, entries)
        # A name that is not UTF-8 reaches here as lone surrogates: shown as U+FFFD.
        write_file_atomically(args.html, html.encode("utf-8", "replace"))
    if args.junit_xml is not None:
        from workbench.output.junit_xml import junit_xml

        write_file_atomically(args.junit_xml, junit_xml(title, entries))

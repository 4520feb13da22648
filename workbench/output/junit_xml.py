"""A triage or a bisection as JUnit XML, the report format every CI system shows.

One test case per module x execution: a mismatch is a `failure` whose message names the
culprit and whose text holds the verdict and the command to dig in; an error an `error`; an
execution the evaluator cannot judge (`unsupported`) is `skipped`. The shape follows the
schema Jenkins validates with (Maven Surefire's `testsuites`/`testsuite`/`testcase`). The XML
is made by `xml.etree.ElementTree`, which escapes; characters XML 1.0 cannot hold (control
characters, unpaired surrogates from names that are not UTF-8) are shown as symbols first.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from workbench.output.safe_text import visible
from workbench.replay.judge.outcome import Kind

if TYPE_CHECKING:
    from workbench.output.triage_report import ReportEntry

_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` with what XML 1.0 cannot hold made visible (newlines and tabs kept)."""
    return _NOT_XML.sub("\ufffd", visible(text, lines=True))


def culprit_message(entry: ReportEntry) -> str:
    """One line for a CI's list of failures: the culprit pass and instruction."""
    culprit = entry.culprit
    if culprit is None:
        return entry.detail.split("; ")[0]
    xla = f" (XLA step {culprit.xla_step:04d})" if culprit.xla_step is not None else ""
    message = f"culprit: step {culprit.index}, pass {culprit.pass_name}{xla}"
    instruction = culprit.instruction
    if instruction is not None:
        source = f" at {instruction.source}" if instruction.source else ""
        message += f"; instruction {instruction.name} ({instruction.opcode}){source}"
    return message


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def junit_xml(suite: str, entries: list[ReportEntry]) -> bytes:
    """The JUnit XML document of `entries`, as UTF-8 bytes."""
    failures = sum(1 for e in entries if e.status == Kind.MISMATCH)
    errors = sum(1 for e in entries if e.status == Kind.ERROR)
    skipped = sum(1 for e in entries if e.status == Kind.UNSUPPORTED)
    total = _seconds(sum(e.seconds for e in entries))
    counts = {"tests": str(len(entries)), "failures": str(failures), "errors": str(errors)}
    root = ElementTree.Element("testsuites", {"name": xml_text(suite), "time": total, **counts})
    testsuite = ElementTree.SubElement(root, "testsuite", {
        "name": xml_text(suite), **counts, "skipped": str(skipped), "time": total,
        "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
        "hostname": socket.gethostname()})
    for entry in entries:
        case = ElementTree.SubElement(
            testsuite, "testcase", name=xml_text(entry.execution or "fake data"),
            classname=xml_text(f"{entry.module}.{entry.name}"), time=_seconds(entry.seconds))
        text = xml_text(f"{entry.detail}\n\ndig in: {entry.command}\n")
        if entry.status == Kind.MISMATCH:
            failure = ElementTree.SubElement(case, "failure", type="mismatch",
                                             message=xml_text(culprit_message(entry)))
            failure.text = text
        elif entry.status == Kind.ERROR:
            error = ElementTree.SubElement(case, "error", type="error",
                                           message=xml_text(entry.detail))
            error.text = text
        elif entry.status == Kind.UNSUPPORTED:
            ElementTree.SubElement(case, "skipped", type="unsupported",
                                   message=xml_text(entry.detail))
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)

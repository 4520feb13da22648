"""`--junit-xml`: one test case per module x execution, valid against the JUnit schema Jenkins
validates with (tests/data/junit/junit-10.xsd, its source named there); a mismatch is a
failure naming the culprit and the command to dig in, a passing execution a bare test case."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.cli import run_cli
from workbench.output.junit_xml import xml_text

if TYPE_CHECKING:
    import xmlschema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
SCHEMA = ROOT / "tests" / "data" / "junit" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    import xmlschema  # here, not at the top: collecting the tests should not pay its import

    return xmlschema.XMLSchema(SCHEMA)


def test_triage_junit_xml_is_valid_with_one_failure_and_passing_cases(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        schema: xmlschema.XMLSchema) -> None:
    out = tmp_path / "results.xml"
    status, _, err = run_cli(capsys, "triage", EXAMPLE, "--no-cache", "--jobs", "0",
                             "--localize", "--junit-xml", out)
    assert status == 1, err
    schema.validate(out)  # raises with the reason when the document is not valid
    suite = ElementTree.parse(out).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("9", "1", "0")
    cases = suite.findall("testcase")
    failing = [case for case in cases if case.find("failure") is not None]
    passing = [case for case in cases if len(case) == 0]
    assert len(failing) == 1 and len(passing) == 8
    failure = failing[0].find("failure")
    assert failure is not None and failing[0].get("classname") == "module_0010.jit_ln"
    assert failing[0].get("name") == "snapshot.-17687811"
    assert failure.get("message") == ("culprit: step 30, pass fusion (XLA step 0028); "
                                      "instruction rsqrt.2 (sqrt) at program.py:4")
    assert (f"dig in: workbench replay {EXAMPLE} module_0010 --execution snapshot.-17687811 "
            "--print-changes-only") in (failure.text or "")


def test_the_schema_check_rejects_what_ci_would(schema: xmlschema.XMLSchema) -> None:
    """The validation can fail: a test case without its required name."""
    bad = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
           '<testcase classname="c"/></testsuite></testsuites>')
    assert not schema.is_valid(bad)


def test_bisect_junit_xml_of_a_passing_execution(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 schema: xmlschema.XMLSchema) -> None:
    out = tmp_path / "results.xml"
    status, _, err = run_cli(capsys, "bisect", EXAMPLE, "module_0012", "--junit-xml", out)
    assert status == 0, err
    schema.validate(out)
    suite = ElementTree.parse(out).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("tests") == "1"
    (case,) = suite.findall("testcase")
    assert case.get("classname") == "module_0012.jit__reduce_sum" and len(case) == 0


def test_text_xml_cannot_hold_is_made_visible() -> None:
    """Control characters and a name that is not UTF-8 (lone surrogates) would make the
    document invalid or unwritable."""
    shown = xml_text("a\x1b[2Jb\udcff\nc")
    assert shown == "a␛[2Jb\ufffd\nc"
    ElementTree.fromstring(ElementTree.tostring(ElementTree.Element("x", name=shown)))


def test_an_error_and_an_unsupported_execution(schema: xmlschema.XMLSchema) -> None:
    """An execution that could not be evaluated is an error; one the evaluator cannot judge
    is skipped, with the op it lacks."""
    from workbench.output.junit_xml import junit_xml
    from workbench.output.triage_report import ReportEntry
    from workbench.replay.judge.outcome import Kind

    entries = [ReportEntry("module_0001", "jit_f", "snapshot.1", Kind.ERROR,
                           "cannot read the inputs: truncated"),
               ReportEntry("module_0002", "jit_g", None, Kind.UNSUPPORTED,
                           "unsupported: custom-call"),
               ReportEntry("module_0003", "jit_h", "snapshot.3", Kind.OK, "no step differs")]
    document = junit_xml("t", entries)
    schema.validate(document.decode())
    suite = ElementTree.fromstring(document).find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "1")
    error, skipped, passed = suite.findall("testcase")
    assert error[0].tag == "error" and error[0].get("message") == entries[0].detail
    assert skipped[0].tag == "skipped" and skipped.get("name") == "fake data"
    assert len(passed) == 0

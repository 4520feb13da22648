"""`workbench actions`: summary, filters, JSON, Chrome trace file, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main


@pytest.fixture(scope="module")
def log(corpus: Path) -> Path:
    return corpus / "mlir" / "iree-opt-to-loops" / "actions.log"


def test_summary_lists_pass_runs(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["actions", str(log)]) == 0
    out = capsys.readouterr().out
    assert "561 actions" in out
    assert "pass-execution ConvertLinalgToLoopsPass on func.func" in out
    assert "apply-pattern" not in out.split("pass executions", 1)[1]


def test_filters_json(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["actions", str(log), "--pass", "CSEPass", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["total"] == 561 and payload["open"] == 0
    assert {a["pass"] for a in payload["actions"] if a["tag"] == "pass-execution"} == {"CSEPass"}
    assert all(a["completed"] for a in payload["actions"])
    assert main(["actions", str(log), "--tag", "apply-pattern", "--pass", "*Fusion*",
                 "--json"]) == 0
    fused = json.loads(capsys.readouterr().out)["actions"]
    assert fused and {a["tag"] for a in fused} == {"apply-pattern"}


def test_chrome_trace_out(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "trace.json"
    assert main(["actions", str(log), "--tag", "pass-execution", "--chrome-trace",
                 str(out)]) == 0
    trace = json.loads(out.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in spans][:2] == ["ConvertStableHloToIreeInputDialects",
                                              "mlir::detail::OpToOpPassAdaptor"]
    assert len(spans) == 12
    assert "Perfetto" in capsys.readouterr().out


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["actions", str(tmp_path / "missing.log")]) == 2
    assert "file not found" in capsys.readouterr().err
    assert main(["actions", str(tmp_path / "x.log"), "--loc", ":3"]) == 2
    (tmp_path / "bin.log").write_bytes(b"\xff\xfe")
    assert main(["actions", str(tmp_path / "bin.log")]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_many_problems_are_summarised(log: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A real log followed by 20,000 completions that match nothing: the text output shows a
    few and the count, `--json` all of them."""
    damaged = tmp_path / "actions.log"
    extra = "[thread iree-opt] completed `pass-execution`\n" * 20_000
    damaged.write_text(log.read_text() + extra)
    assert main(["actions", str(damaged)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("problem")]
    assert len(lines) == 6
    assert "matches no open action" in lines[0]
    assert "19995 more (20000 in all; --json lists them)" in lines[-1]
    assert main(["actions", str(damaged), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["problems"]) == 20_000

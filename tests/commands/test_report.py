"""`workbench report`: tables for people, JSON trees for scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main


def test_json_tree(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = corpus / "mlir" / "iree-compile-jit_f" / "compile.log"
    assert main(["report", str(log), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (timing,) = payload["timing"]
    assert timing["total_s"] == 1.6664 and timing["view"] == "pipeline"
    assert timing["rows"][1]["name"] == "'builtin.module' Pipeline"
    assert timing["rows"][1]["children"][0]["name"] == "CheckVHLOStableHloMixUsage"
    (statistics,) = payload["statistics"]
    assert statistics["view"] == "pipeline"
    dce = next(p for p in statistics["passes"] if p["name"] == "SymbolDCEPass")
    assert dce["statistics"] == [{"name": "num-dce'd", "value": 0,
                                  "description": "Number of symbols DCE'd"}]


def test_tables(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = corpus / "mlir" / "iree-opt-list-reports" / "reports-list.log"
    assert main(["report", str(log)]) == 0
    out = capsys.readouterr().out
    assert "total 0.7054 s" in out and "User Time" in out
    assert "num-transfers-elided" in out


def test_no_report_and_missing_file(corpus: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(corpus / "mlir" / "crash-reproducer" / "stderr.log")]) == 0
    assert "no timing or statistics report" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nope.log")]) == 2

"""examples/xdsl-faulty-pass: the script reproduces the shipped trace and snapshot, and the
replay names the faulty pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "xdsl-faulty-pass"
TRACE = EXAMPLE / "module_0000.dense_relu.mlir-trace.pb"
SNAPSHOT = EXAMPLE / "module_0000.dense_relu.snapshot.0.pb"


def test_script_reproduces_the_shipped_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(EXAMPLE / "make_trace.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for shipped in (TRACE, SNAPSHOT):
        assert (tmp_path / shipped.name).read_bytes() == shipped.read_bytes()


def test_mlir_replay_names_the_faulty_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mlir-replay", f"--mlir-compilation-trace={TRACE}",
                 f"--hlo-snapshot={SNAPSHOT}", "--print-changes-only"]) == 1
    captured = capsys.readouterr()
    assert captured.out == (EXAMPLE / "outputs" / "mlir-replay.stdout").read_text()
    assert "first pass whose result differs: StrengthReduceMultiplyPass (pass 3)" in captured.err
    assert "recorded result vs the first pass: ok" in captured.err


def test_triage_names_the_faulty_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["triage", str(EXAMPLE), "--jobs", "0", "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["status"] == "mismatch"
    assert result["culprit"]["pass"] == "StrengthReduceMultiplyPass"
    shipped = json.loads((EXAMPLE / "outputs" / "triage.json").read_text())["results"][0]
    assert shipped["culprit"] == result["culprit"]

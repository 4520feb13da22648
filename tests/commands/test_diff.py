"""`workbench diff` and `show --changed` on the corpus: exit status, step specs, output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

LAYERNORM = "xla/layernorm"


def test_steps_by_xla_number(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "0027", "0028", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["sections"] == {"changed": 2, "added": 2, "removed": 0, "unchanged": 2}
    assert {s["name"] for s in payload["section_changes"] if s["status"] == "added"} == {
        "%fused_computation", "%fused_computation.1"}


def test_equal_steps_exit_zero(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "2", "3"]) == 0
    assert capsys.readouterr().out == ""


def test_renumbering_pair_raw_and_normalized(corpus: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus / "xla/fori_loop"
    (a,) = folder.glob("module_0002.jit_f.0021.*.txt")
    (b,) = folder.glob("module_0002.jit_f.0022.*.txt")
    assert main(["diff", str(a), str(b)]) == 0
    assert main(["diff", "--raw", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"--- {a}\n+++ {b}\n@@ ")
    assert main(["diff", str(folder), "jit_f", "0021", "0022"]) == 0


def test_ambiguous_pass_name_lists_choices(corpus: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "algsimp", "fusion"]) == 2
    error = capsys.readouterr().err
    assert "ambiguous" in error and "0006 algsimp" in error and "0013 algsimp" in error


def test_pass_name_and_side_by_side(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "fusion", "fusion-wrapper",
                 "-y", "-W", "100", "-U", "0"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("@@ ") and all(len(line) <= 100 for line in out)


def test_bad_input_exits_two(corpus: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "missing.txt"), str(tmp_path / "other.txt")]) == 2
    assert main(["diff", str(corpus / LAYERNORM), "jit_ln", "0999", "0028"]) == 2
    assert main(["diff", str(corpus / LAYERNORM), "nosuch", "1", "2"]) == 2
    assert main(["diff", "a", "b", "c"]) == 2
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["diff", str(empty), str(empty)]) == 2
    assert "empty file" in capsys.readouterr().err


def test_show_changed_column(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(corpus / LAYERNORM), "jit_ln", "--changed", "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    by_step = {s["xla_step"]: s["changed"] for s in steps if s["xla_step"] is not None}
    assert by_step[28] is True  # fusion
    assert by_step[1] is False  # pipeline-start of the next pipeline: nothing changed
    assert steps[0]["changed"] is None  # the first step has nothing before it

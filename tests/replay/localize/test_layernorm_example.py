"""The shipped example: XLA's fusion pass turned `rsqrt` into `sqrt` (step 0028)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.planting import plant
from workbench.cli import main
from workbench.index import scan
from workbench.replay.bisect import bisect_replay
from workbench.replay.localize.culprit import localize_verdict
from workbench.replay.steps import open_replay

EXAMPLE = Path(__file__).parents[3] / "examples" / "layernorm-broken-fusion"


def test_culprit_is_the_rsqrt_inside_the_fusion_of_step_0028(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", str(EXAMPLE), "jit_ln", "--localize", "--json"]) == 1
    culprit = json.loads(capsys.readouterr().out)["culprit"]
    assert culprit["xla_step"] == 28
    instruction = culprit["instruction"]
    assert instruction["op_name"] == "jit(ln)/rsqrt"
    assert instruction["source"] == "program.py:4"
    assert instruction["computation"] == "fused_computation.1"
    assert (instruction["name"], instruction["opcode"]) == ("rsqrt.2", "sqrt")
    assert instruction["max_abs_error"] > instruction["bound"]
    source = (EXAMPLE / "program.py").read_text().splitlines()[3]
    assert "jax.lax.rsqrt" in source  # line 4 is where the user wrote it


def test_text_report_shows_both_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["localize", str(EXAMPLE), "jit_ln", "0027", "0028"]) == 1
    out = capsys.readouterr().out
    assert ">   %rsqrt.0 = f32[6]{0} rsqrt(%add.0)" in out
    assert ">   ROOT %rsqrt.2 = f32[6]{0} sqrt(%add.3)" in out
    assert "source:  program.py:4" in out
    assert "first differing elements" in out


def test_reduced_pair_is_small_and_triages_the_same(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reduced"
    assert main(["reduce", str(EXAMPLE), "jit_ln", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["instructions"]["before"] <= 10 and payload["instructions"]["after"] <= 10
    assert payload["reproduces"]
    readme = (out / "README.txt").read_text()  # what the folder is, and how to run it
    assert all(name in readme for name in payload["files"])
    assert f"workbench bisect {out} jit_ln" in readme and "fusion" in readme
    assert main(["triage", str(EXAMPLE), "-j", "0", "--json"]) == 1
    original = next(r for r in json.loads(capsys.readouterr().out)["results"]
                if r["name"] == "jit_ln")
    assert main(["triage", str(out), "-j", "0", "--localize", "--json"]) == 1
    reduced = json.loads(capsys.readouterr().out)["results"][0]
    assert reduced["status"] == original["status"] == "mismatch"
    assert reduced["culprit"]["pass"] == original["culprit"]["pass"] == "fusion"
    assert reduced["culprit"]["instruction"]["op_name"] == "jit(ln)/rsqrt"


def test_planted_into_a_real_dump(tmp_path: Path) -> None:
    """rsqrt -> sqrt planted from XLA step 0020 on: bisection names 0020, localization the
    rsqrt the program wrote, before any fusion."""
    root = tmp_path / "planted"
    plant(EXAMPLE, root, "module_0010.jit_ln", 20, "rsqrt", "sqrt")
    dump = scan(root)
    module = dump.find_module("jit_ln")
    with open_replay(root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay)
        assert verdict.culprit is not None and verdict.culprit.step.xla_step == 20
        result = localize_verdict(replay, verdict)
    assert result.instruction is not None
    assert (result.instruction.opcode, result.instruction.op_name,
            result.instruction.source) == ("sqrt", "jit(ln)/rsqrt", "program.py:4")
    assert result.counterpart is not None and result.counterpart.opcode == "rsqrt"


def test_triage_localize_on_a_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "copy"
    shutil.copytree(EXAMPLE, root)
    assert main(["triage", str(root), "-j", "0", "--localize"]) == 1
    out = capsys.readouterr().out
    assert "instruction: rsqrt.2 (sqrt, jit(ln)/rsqrt) in fused_computation.1 at program.py:4" \
        in out

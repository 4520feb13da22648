"""Two modules with one number in one folder (two processes writing one dump folder): they
are told apart by name, named as a problem, listed and judged apart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.judge.outcome import Kind
from workbench.replay.triage.run import triage

CORPUS = Path(__file__).parent / "data" / "corpus" / "xla"


def _collision(root: Path) -> Path:
    """The broken `module_0010.jit_ln` and the fine one, renamed `jit_fine`, in one folder."""
    root.mkdir()
    for path in (CORPUS / "layernorm-broken-fusion").glob("module_0010.jit_ln.*"):
        shutil.copy(path, root)
    for path in (CORPUS / "layernorm").glob("module_0010.jit_ln.*"):
        shutil.copy(path, root / path.name.replace(".jit_ln.", ".jit_fine.", 1))
    return root


def test_two_modules_with_one_number_are_two_modules(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = _collision(tmp_path / "dump")
    dump = scan(root)
    assert [(m.key, m.id, m.name) for m in dump.modules] == [
        ("module_0010.jit_fine", "module_0010", "jit_fine"),
        ("module_0010.jit_ln", "module_0010", "jit_ln")]
    for module in dump.modules:
        assert all(f".{module.name}." in file for file in module.files())
        assert len(module.executions) == 1
    assert main(["ls", str(root), "--check", "--json"]) == 0
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert problem["file"] == "module_0010"
    assert "2 modules share the number module_0010: jit_fine, jit_ln" in problem["reason"]

    fine, broken = triage(dump, jobs=0)
    assert (fine.module, fine.status) == ("module_0010.jit_fine", Kind.OK)
    assert (broken.module, broken.status) == ("module_0010.jit_ln", Kind.MISMATCH)
    assert broken.culprit is not None and broken.culprit.pass_name == "fusion"

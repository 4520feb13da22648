"""A file the index lists is readable or a named problem: a step that is a FIFO, a socket, a
dangling link, a folder or a link out of the dump is never opened, `ls --check` names it, and
triage gives the executions that need it an `error` with the reason instead of bisecting a
timeline with the culprit missing (which names the wrong pass, or says ok)."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.judge.outcome import Kind
from workbench.replay.triage.run import triage
from workbench.sources import FOLLOW_LINKS_VARIABLE

BROKEN = Path(__file__).parent / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
CULPRIT = "module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion." \
    "before_fusion-wrapper.txt"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to about 100 bytes: bind it relative
    try:
        server.bind(path.name)
    finally:
        os.chdir(here)
        server.close()  # the socket file stays


def _dangling(path: Path) -> None:
    path.symlink_to("gone.txt")


def _folder(path: Path) -> None:
    path.mkdir()


def _outside(path: Path) -> None:
    outside = path.parent.parent / "outside.txt"
    shutil.copy(BROKEN / CULPRIT, outside)
    path.symlink_to(outside)


HOSTILE = {
    "fifo": (_fifo, "cannot read: a FIFO, not a regular file"),
    "socket": (_socket, "cannot read: a socket, not a regular file"),
    "dangling": (_dangling, "dangling link: its target does not exist"),
    "folder": (_folder, "cannot read: a folder, not a regular file"),
    "outside": (_outside, "link outside the dump"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_an_unreadable_culprit_step_is_an_error_not_another_culprit(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FOLLOW_LINKS_VARIABLE, raising=False)
    root = tmp_path / "dump"
    shutil.copytree(BROKEN, root)
    make, reason = HOSTILE[kind]
    for name in (CULPRIT, CULPRIT.replace(".txt", ".hlo.pb")):
        (root / name).unlink()
        make(root / name)
    dump = scan(root)
    module = dump.find_module("module_0010")
    assert CULPRIT in module.step_files()  # still in the timeline, not dropped
    assert main(["ls", str(root), "--check", "--json"]) == 0
    problems = {p["file"]: p["reason"] for p in json.loads(capsys.readouterr().out)["problems"]}
    assert problems[CULPRIT].startswith(reason)
    dump.modules = [module]
    (result,) = triage(dump, jobs=0)
    assert result.status == Kind.ERROR
    assert CULPRIT.replace(".txt", ".hlo.pb") in result.detail and reason in result.detail


def test_a_fifo_named_as_inputs_is_refused_not_waited_on(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    os.mkfifo(tmp_path / "x.npy")
    code = main(["replay", str(BROKEN), "module_0010", "--inputs", str(tmp_path / "x.npy")])
    assert code == 2
    assert "a FIFO, not a regular file" in capsys.readouterr().err


def test_big_endian_inputs_are_the_same_numbers(tmp_path: Path) -> None:
    import numpy as np

    from workbench.replay.inputs import load_npy_inputs

    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "big.npy", values.astype(">f4"))
    (loaded,) = load_npy_inputs((tmp_path / "big.npy",), [(np.dtype(np.float32), (2, 3))])
    assert loaded.dtype == np.float32 and loaded.dtype.isnative
    np.testing.assert_array_equal(loaded, values)

"""`workbench ls --check`, and the promise that nothing writes into a dump folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.cli import main


def test_check_reports_problems_and_exits_zero(corpus: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for path in (corpus / "xla" / "layernorm").glob("module_0010.jit_ln.00[01]*"):
        shutil.copy(path, tmp_path / path.name)
    broken = sorted(tmp_path.glob("*.hlo.pb"))[3]
    broken.write_bytes(broken.read_bytes()[:200])
    empty = sorted(tmp_path.glob("*.txt"))[5]
    empty.write_bytes(b"")

    assert main(["ls", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []  # names alone look fine

    assert main(["ls", str(tmp_path), "--check", "--json"]) == 0
    problems = {p["file"]: p["reason"] for p in json.loads(capsys.readouterr().out)["problems"]}
    assert set(problems) == {broken.name, empty.name}
    assert problems[empty.name] == "empty file (still being written?)"

    assert main(["ls", str(tmp_path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "2 problems" in out
    assert f"problem: {empty.name}: empty file" in out.replace("\n", "")


def manifest(root: Path) -> dict[str, tuple]:
    """Every entry under `root`: content hash, size, mode and modification time."""
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            entries[str(path.relative_to(root))] = (digest, info.st_size, info.st_mode,
                                                   info.st_mtime_ns)
    return entries


@pytest.fixture
def read_only_copy(corpus: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "layernorm"
    shutil.copytree(corpus / "xla" / "layernorm", copy)
    paths = [copy, *copy.rglob("*")]
    for path in paths:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    yield copy
    for path in paths:  # let tmp_path be cleaned up
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_nothing_writes_into_the_dump(read_only_copy: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    # Caches and settings may go to the user's folders: point those outside the dump.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    before = manifest(read_only_copy)
    commands = [
        ["ls", str(read_only_copy)],
        ["ls", str(read_only_copy), "--json"],
        ["ls", str(read_only_copy), "--check"],
        ["ls", str(read_only_copy), "--check", "--json"],
        ["show", str(read_only_copy), "jit_ln"],
        ["show", str(read_only_copy), "module_0010", "--json"],
    ]
    for command in commands:
        assert main(command) == 0, command
        capsys.readouterr()
    assert manifest(read_only_copy) == before
    assert len(before) > 100

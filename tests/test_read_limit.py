"""Nothing is read or decompressed past the read limit: a gzip bomb or a huge sparse file is a
named problem, not gigabytes of memory."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.model import Source
from workbench.sources import READ_LIMIT_VARIABLE, ReadError, read_bytes, read_limit

STEP = "module_0099.jit_f.before_optimizations.txt"


@pytest.fixture(autouse=True)
def no_limit_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--max-read` sets the environment; the test's changes are undone after it."""
    monkeypatch.delenv(READ_LIMIT_VARIABLE, raising=False)


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    """64 MB of zeros in a gzip of about 64 KB, named like a step of a dump."""
    dump = tmp_path / "dump"
    dump.mkdir()
    with gzip.open(dump / (STEP + ".gz"), "wb", compresslevel=9) as stream:
        chunk = bytes(1 << 20)
        for _ in range(64):
            stream.write(chunk)
    assert (dump / (STEP + ".gz")).stat().st_size < 200_000
    return dump


def test_default_limit() -> None:
    assert read_limit() == 512 << 20


def test_decompression_stops_at_the_limit(bomb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(READ_LIMIT_VARIABLE, "16M")
    with pytest.raises(ReadError) as raised:
        read_bytes(bomb, Source(STEP + ".gz"))
    assert raised.value.reason == ("larger decompressed than the read limit of 16 MB (raise it "
                                   "with --max-read SIZE)")
    monkeypatch.setenv(READ_LIMIT_VARIABLE, "64M")
    assert len(read_bytes(bomb, Source(STEP + ".gz"))) == 64 << 20


def test_a_large_file_is_refused_before_it_is_read(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    with open(dump / STEP, "wb") as stream:  # sparse: 1 GB on paper, nothing on disk
        stream.truncate(1 << 30)
    monkeypatch.setenv(READ_LIMIT_VARIABLE, "16M")
    with pytest.raises(ReadError, match="larger than the read limit of 16 MB"):
        read_bytes(dump, Source(STEP))
    assert read_bytes(dump, Source(STEP, start=100, end=200)) == bytes(100)  # a small range
    with pytest.raises(ReadError, match="larger than the read limit"):
        read_bytes(dump, Source(STEP, start=0, end=32 << 20))


def test_ls_check_and_show_name_the_file_and_the_limit(bomb: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", str(bomb), "--check", "--json", "--max-read", "16M"]) == 0
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert {"file": STEP + ".gz", "reason": "larger decompressed than the read limit of 16 MB "
            "(raise it with --max-read SIZE)"} in problems
    assert os.environ[READ_LIMIT_VARIABLE] == str(16 << 20)
    # A step that cannot be read has no "changed" flag; the rest of the timeline still does.
    (bomb / "module_0099.jit_f.0001.p.after_a.before_b.txt").write_text(
        "HloModule m\n\nENTRY main {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert main(["show", str(bomb), "module_0099", "--changed", "--json", "--max-read",
                 "16M"]) == 0
    assert [step["changed"] for step in json.loads(capsys.readouterr().out)["steps"]] == [
        None, None]

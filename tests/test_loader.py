"""Bad input through the loader: every failure names the file and the reason."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from workbench import loader
from workbench.loader import ReadError, read_bytes, read_text
from workbench.model import Source


def test_reads_whole_file_and_range(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world")
    assert read_text(tmp_path, Source("a.txt")) == "hello world"
    assert read_text(tmp_path, Source("a.txt", start=6, end=11)) == "world"


def test_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.hlo.pb.gz").write_bytes(gzip.compress(b"\x0a\x01x"))
    assert read_bytes(tmp_path, Source("a.hlo.pb.gz")) == b"\x0a\x01x"
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    with pytest.raises(ReadError, match="b.txt.gz: bad gzip"):
        read_bytes(tmp_path, Source("b.txt.gz"))


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "empty file"), (b"ok \xff\xfe bad", "not UTF-8 text \\(bad byte at offset 3\\)")],
)
def test_bad_text(tmp_path: Path, content: bytes, reason: str) -> None:
    (tmp_path / "f.txt").write_bytes(content)
    with pytest.raises(ReadError, match=f"f.txt: {reason}"):
        read_text(tmp_path, Source("f.txt"))


def test_missing_and_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReadError, match="gone.txt: file not found"):
        read_text(tmp_path, Source("gone.txt"))
    (tmp_path / "locked.txt").write_text("secret")

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, for whom chmod 0 changes nothing: make open() refuse instead.
    monkeypatch.setattr(loader, "open", denied, raising=False)
    with pytest.raises(ReadError, match="locked.txt: permission denied"):
        read_text(tmp_path, Source("locked.txt"))

"""An output that cannot be written (disk full, a folder that cannot be written) ends the
command with its own exit status (4, not 1: for `reduce` 1 means "does not reproduce") and a
message naming the file, no traceback, and leaves no temporary file, no half-written file
under its final name and no partial reproducer folder."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.destinations import (
    OUTPUT_ERROR_STATUS,
    OutputError,
    OutputFolder,
    write_file_atomically,
)

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
DUMP = ROOT / "tests" / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
ACTIONS = ROOT / "tests" / "data" / "corpus" / "mlir" / "iree-opt-to-loops" / "actions.log"
AS_ROOT = os.geteuid() == 0


@contextlib.contextmanager
def _tmpfs(folder: Path, options: str) -> Iterator[Path]:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def nearly_full(tmp_path: Path) -> Iterator[Path]:
    """A 64 KB tmpfs with two pages (8 KB) left: a few small files fit, then the disk is full."""
    if not AS_ROOT:
        pytest.skip("mounting a small tmpfs needs root")
    with _tmpfs(tmp_path / "small", "size=64k") as folder:
        fillers = []
        with contextlib.suppress(OSError):
            while True:
                filler = folder / f".filler{len(fillers)}"
                fillers.append(filler)
                filler.write_bytes(b"x" * 4096)
        for filler in fillers[:2]:
            filler.unlink()
        yield folder


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder no file can be made in: a read-only tmpfs as root (root writes anywhere
    else), else a folder without write permission."""
    if AS_ROOT:
        with _tmpfs(tmp_path / "read-only", "ro,size=64k") as folder:
            yield folder
        return
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def _visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".filler"))


def _fails_cleanly(capsys: pytest.CaptureFixture[str], words: list[str], path: Path) -> str:
    assert main(words) == OUTPUT_ERROR_STATUS
    err = capsys.readouterr().err
    assert f"cannot write {path}" in err and "Traceback" not in err
    return err


def test_dump_literals_on_a_full_disk(nearly_full: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = nearly_full / "literals"
    err = _fails_cleanly(capsys, ["replay", str(DUMP), "module_0010", "--dump-literals",
                                  str(out)], out)
    assert "No space left on device" in err
    assert _visible(nearly_full) == []  # no folder, no temporary, no file under its name


def test_reduce_on_a_full_disk(nearly_full: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = nearly_full / "reduced"
    err = _fails_cleanly(capsys, ["reduce", str(EXAMPLE), "jit_ln", "--out", str(out)], out)
    assert "No space left on device" in err
    assert _visible(nearly_full) == []


def test_reduce_into_a_folder_that_cannot_be_written(unwritable: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = unwritable / "reduced"
    _fails_cleanly(capsys, ["reduce", str(EXAMPLE), "jit_ln", "--out", str(out)], out)
    assert list(unwritable.iterdir()) == []


def test_chrome_trace_into_a_folder_that_cannot_be_written(
        unwritable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = unwritable / "trace.json"
    _fails_cleanly(capsys, ["actions", str(ACTIONS), "--chrome-trace", str(out)], out)
    assert list(unwritable.iterdir()) == []


def _disk_full(stream: object) -> None:
    stream.write(b"half")  # type: ignore[attr-defined]  # a stream of any kind: what fails is the disk
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    write_file_atomically(out, "first")
    with pytest.raises(OutputError, match=f"cannot write {out}: No space left on device"):
        write_file_atomically(out, _disk_full)
    assert out.read_text() == "first"
    assert _visible(tmp_path) == ["trace.json"]


def test_a_folder_that_fails_halfway_is_removed_whole(tmp_path: Path) -> None:
    out = tmp_path / "new" / "reduced"
    with pytest.raises(OutputError), OutputFolder(out) as folder:
        folder.write("a.txt", "a")
        folder.write("b.pb", b"b")
        folder.write("c.pb", _disk_full)
    assert list(tmp_path.iterdir()) == []  # `new` too: this run made it

    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "theirs.txt").write_text("not ours")
    with pytest.raises(KeyboardInterrupt), OutputFolder(kept) as folder:
        folder.write("a.txt", "a")
        raise KeyboardInterrupt
    assert _visible(kept) == ["theirs.txt"]


def test_outputs_get_the_mode_open_gives(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    write_file_atomically(out, "{}")
    umask = os.umask(0o022)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask

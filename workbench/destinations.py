"""Where the workbench may write: never into a dump, never over an input, never over a file
it was not told to replace.

Every writer (`actions --chrome-trace`, `replay --dump-literals`, ...) asks `check_file` or
`check_folder` before it opens anything, and writes every file with `write_file_atomically`
(a folder of them with `OutputFolder`), so a failed or interrupted write leaves no
half-written output either, and says what failed (`OutputError`). Paths are compared after
links are resolved: a link into the dump folder is the dump folder.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO


class RefusedDestination(ValueError):
    """An output path the workbench will not write to; the message says why and what to do."""


def _dump_folder(dump: Path) -> Path:
    return dump if dump.is_dir() else dump.parent


def _refuse_inputs(out: Path, flag: str, dumps: Iterable[Path], inputs: Iterable[Path]) -> None:
    resolved = out.resolve()
    for source in inputs:
        if source.resolve() == resolved:
            raise RefusedDestination(f"{flag} {out} is an input ({source}); the workbench never "
                                     "overwrites its inputs: choose another path")
    for dump in dumps:
        folder = _dump_folder(dump).resolve()
        if resolved == folder or folder in resolved.parents:
            raise RefusedDestination(
                f"{flag} {out} is inside the dump folder {_dump_folder(dump)}; the workbench "
                "never writes into a dump: choose a path outside it, e.g. under /tmp")


def check_file(out: Path, flag: str, *, dumps: Iterable[Path] = (),
               inputs: Iterable[Path] = (), force: bool = False) -> None:
    """Refuse `out` (an output file named by `flag`) inside a dump, equal to an input, or
    already there unless `force`."""
    _refuse_inputs(out, flag, dumps, inputs)
    if out.is_dir():
        raise RefusedDestination(f"{flag} {out} is a folder; name a file")
    if out.exists() and not force:
        raise RefusedDestination(f"{flag} {out} exists; add --force to replace it")


def check_folder(out: Path, flag: str, *, dumps: Iterable[Path] = (),
                 inputs: Iterable[Path] = (), force: bool = False) -> None:
    """Refuse `out` (an output folder named by `flag`) inside a dump or holding an input, or
    a folder with files in it unless `force`."""
    _refuse_inputs(out, flag, dumps, inputs)
    resolved = out.resolve()
    for source in inputs:
        if resolved in source.resolve().parents:
            raise RefusedDestination(f"{flag} {out} holds an input ({source}); choose an "
                                     "empty folder")
    if out.exists() and not out.is_dir():
        raise RefusedDestination(f"{flag} {out} is a file; name a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise RefusedDestination(f"{flag} {out} is not empty; add --force to write into it "
                                 "(files of the same names are replaced)")


class OutputError(Exception):
    """An output could not be written (disk full, no permission, a read-only file system):
    the message names the path and the reason. Commands end with `OUTPUT_ERROR_STATUS`."""


OUTPUT_ERROR_STATUS = 4  # documented in the README (1: a mismatch, 2: bad arguments, 3: no tool)


def _failure(out: Path, error: OSError) -> OutputError:
    return OutputError(f"cannot write {out}: {error.strerror or error}")


@functools.cache
def _new_file_mode() -> int:
    """The mode `open` gives a new file (0666 less the umask), read without changing the
    umask (threads may be making files): mkstemp's files are 0600."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    return 0o644


def write_file_atomically(out: Path, data: str | bytes | Callable[[BinaryIO], object]) -> None:
    """Write `data` (or what `data(stream)` writes) to `out` through a temporary file in the
    same folder, flushed to disk, then renamed: a reader never sees half a file, and an error
    leaves whatever was there before. Any OS error (disk full, no permission) removes the
    temporary file and raises `OutputError`."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp",
                                             dir=out.parent)
    except OSError as error:
        raise _failure(out, error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            if callable(data):
                data(stream)
            else:
                stream.write(data.encode() if isinstance(data, str) else data)
            stream.flush()
            os.fchmod(stream.fileno(), _new_file_mode())
            os.fsync(stream.fileno())
        os.replace(temporary, out)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _failure(out, error) from None
        raise


class OutputFolder:
    """A folder of outputs (`reduce --out`, `--dump-literals`) written file by file, each
    atomically. When writing fails (`OutputError`, Ctrl-C, anything), what this run wrote is
    removed, and the folder too when this run made it: no partial folder is left that looks
    like a reproducer. Files of the same names that were there before (`--force`) are not
    brought back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written: list[Path] = []
        self.made: Path | None = None  # the outermost folder this run made

    def __enter__(self) -> OutputFolder:
        missing = [p for p in (self.path, *self.path.parents) if not p.exists()]
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _failure(self.path, error) from None
        self.made = missing[-1] if missing else None
        return self

    def write(self, name: str, data: str | bytes | Callable[[BinaryIO], object]) -> None:
        target = self.path / name
        write_file_atomically(target, data)
        self.written.append(target)

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if error is None:
            return
        for path in self.written:
            with contextlib.suppress(OSError):
                path.unlink()
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)

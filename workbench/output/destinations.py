"""Where the workbench may write: never into a dump, never over an input, never over a file
it was not told to replace.

Every writer (`actions --chrome-trace`, `replay --dump-literals`, ...) asks `check_file` or
`check_folder` before it opens anything, and writes a file with `write_file_atomically`, so a
failed or interrupted write leaves no half-written output either. Paths are compared after
links are resolved: a link into the dump folder is the dump folder.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


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


def write_file_atomically(out: Path, data: str | bytes) -> None:
    """Write `data` to `out` through a temporary file in the same folder, then rename: a
    reader never sees half a file, and an error leaves whatever was there before."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data.encode() if isinstance(data, str) else data)
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise

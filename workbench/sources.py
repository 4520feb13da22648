"""Read the bytes and text a `Source` points at, with errors that name the file and the reason.

Every reader goes through here, so bad input is handled once: missing files, permissions,
files that are still being written (empty or cut short), gzip, text that is not UTF-8, and
files larger than the read limit (a 3 MB `.gz` can expand to 3 GB: nothing is read or
decompressed past the limit; `WORKBENCH_READ_LIMIT`, which `--max-read` sets, default 512 MB).
Container formats (an mlir-trace proto holding one IR per pass) register an entry reader.
This module sits below the format readers: it imports none of them (an entry reader's module
is imported by name, on first need).
"""

from __future__ import annotations

import errno
import gzip
import importlib
import io
import os
import stat
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from workbench.model import Source
from workbench.sizes import format_size, size_from_environment

READ_LIMIT_VARIABLE = "WORKBENCH_READ_LIMIT"
DEFAULT_READ_LIMIT = 512 << 20  # far above any real IR text; raise it for huge snapshots


class ReadError(Exception):
    """A file could not be read or understood. `str()` is `<file>: <reason>`."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = file
        self.reason = reason


# file suffix -> function(file bytes, entry index, file name) -> text of that entry
ENTRY_READERS: dict[str, Callable[[bytes, int, str], str]] = {}
# Modules that register entry readers when imported. A process that reads an entry without
# having scanned the dump (a replay worker) imports them on first need.
ENTRY_READER_MODULES = ("workbench.formats.mlir_trace", "workbench.formats.hlo_print")


def _entry_reader(file: str) -> Callable[[bytes, int, str], str] | None:
    for suffix, reader in ENTRY_READERS.items():
        if file.endswith(suffix):
            return reader
    return None


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX; elsewhere there are no fifos to wait on


def _open_nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | _NONBLOCK)


def not_regular(mode: int) -> str | None:
    """What a file of this `st_mode` is when it is not a regular file (`a FIFO`, ...); None
    for a regular file. Only regular files are opened: opening a FIFO can wait for a writer
    forever, a device can act on being opened."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


DANGLING_LINK = "dangling link: its target does not exist"


def not_regular_reason(kind: str) -> str:
    return f"cannot read: {kind}, not a regular file"


def open_file(path: Path | str) -> BinaryIO:
    """Open a regular file of a dump for reading, in binary. Anything else (a FIFO, a socket,
    a device, a folder) is refused before it is opened (OSError), and again after (non
    blocking, so a FIFO swapped in between cannot make the open wait)."""
    kind = not_regular(os.stat(path).st_mode)
    if kind is not None:
        raise OSError(errno.EINVAL, f"{kind}, not a regular file")
    handle = open(path, "rb", opener=_open_nonblocking)  # noqa: SIM115 (returned open)
    try:
        kind = not_regular(os.fstat(handle.fileno()).st_mode)
        if kind is not None:
            raise OSError(errno.EINVAL, f"{kind}, not a regular file")
        if _NONBLOCK:
            os.set_blocking(handle.fileno(), True)
    except BaseException:
        handle.close()
        raise
    return handle


def read_limit() -> int:
    """The most bytes read from one file (after decompression): the environment's, else the
    default."""
    configured = size_from_environment(READ_LIMIT_VARIABLE)
    return DEFAULT_READ_LIMIT if configured is None else configured


def set_read_limit(size: int) -> None:
    """Make `size` bytes the read limit for this process and the workers it starts."""
    os.environ[READ_LIMIT_VARIABLE] = str(size)


FOLLOW_LINKS_VARIABLE = "WORKBENCH_FOLLOW_LINKS"


def follow_links() -> bool:
    """Whether links out of a dump are read (`--follow-links`); by default they are not."""
    return os.environ.get(FOLLOW_LINKS_VARIABLE) == "1"


def set_follow_links() -> None:
    os.environ[FOLLOW_LINKS_VARIABLE] = "1"


def link_outside(root: Path | str, file: str) -> str | None:
    """Where `file` (relative to `root`) really is, when a link takes it outside the dump
    and links are not followed; else None. A dump from elsewhere may link to `/etc/passwd`
    or to a huge file: such a file is listed as a problem, never read."""
    if follow_links():
        return None
    top = os.path.realpath(root)
    target = os.path.realpath(os.path.join(top, file))
    if target == top or target.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return target


def outside_reason(target: str) -> str:
    return f"link outside the dump: {target} (read it with --follow-links)"


def _too_large(file: str, limit: int, what: str = "") -> ReadError:
    return ReadError(file, f"larger{what} than the read limit of {format_size(limit)} (raise "
                           "it with --max-read SIZE)")


def read_bytes(root: Path, source: Source) -> bytes:
    """The bytes of `source` (a whole file or a byte range), gunzipped when the file is `.gz`;
    never more than the read limit."""
    path = root / source.file
    outside = link_outside(root, source.file)
    if outside is not None:
        raise ReadError(source.file, outside_reason(outside))
    limit = read_limit()
    try:
        with open_file(path) as handle:
            if source.start:
                handle.seek(source.start)
            size = None if source.end is None else source.end - source.start
            on_disk = os.fstat(handle.fileno()).st_size - source.start  # 0 for a fifo
            if (on_disk if size is None else size) > limit:
                raise _too_large(source.file, limit)
            data = handle.read(limit + 1 if size is None else size)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ReadError(source.file, DANGLING_LINK) from None
        raise ReadError(source.file, "file not found (deleted since the folder was listed?)")\
            from None
    except PermissionError:
        raise ReadError(source.file, "permission denied") from None
    except OSError as error:
        raise ReadError(source.file, f"cannot read: {error.strerror}") from None
    if len(data) > limit:  # a file that grew, or a fifo
        raise _too_large(source.file, limit)
    if source.file.endswith(".gz"):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(limit + 1)
        except (OSError, EOFError, zlib.error) as error:
            raise ReadError(source.file, f"bad gzip data: {error}") from None
        if len(data) > limit:
            raise _too_large(source.file, limit, " decompressed")
    return data


def decode_text(data: bytes, file: str) -> str:
    """Strict UTF-8; the error says where the first bad byte is, or that the text stops in
    the middle of a character (a file still being written, or cut short)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.end == len(data) and error.reason == "unexpected end of data":
            raise ReadError(file, f"text ends inside a UTF-8 character at offset {error.start} "
                                  "(cut short, or still being written?)") from None
        raise ReadError(file, f"not UTF-8 text (bad byte at offset {error.start})") from None


def read_text(root: Path, source: Source) -> str:
    """The text `source` points at: a file, a range of one, or an entry of a container."""
    if source.entry is not None:
        reader = _entry_reader(source.file)
        if reader is None:
            for name in ENTRY_READER_MODULES:
                importlib.import_module(name)
            reader = _entry_reader(source.file)
        if reader is None:
            raise ReadError(source.file, "no reader knows entries of this kind of file")
        return reader(read_bytes(root, Source(source.file)), source.entry, source.file)
    data = read_bytes(root, source)
    if not data:
        raise ReadError(source.file, "empty file (still being written?)")
    return decode_text(data, source.file)


def file_signature(root: Path, source: Source) -> tuple[object, ...]:
    """What identifies the content of `source` without reading it: path, byte range, entry,
    modification time and size. Whatever is made from a file is keyed by this, so a file
    rewritten in place (a dump still being written) is read again. Raises ReadError (as
    read_bytes would) when the file is gone."""
    try:
        status = os.stat(root / source.file)
    except FileNotFoundError:
        raise ReadError(source.file, "file not found (deleted since the folder was listed?)")\
            from None
    except PermissionError:
        raise ReadError(source.file, "permission denied") from None
    except OSError as error:
        raise ReadError(source.file, f"cannot read: {error.strerror}") from None
    # The folder's name is interned and the file's is the model's own string: a store holds
    # tens of thousands of these keys.
    return (sys.intern(str(root)), source.file, source.start, source.end, source.entry,
            status.st_mtime_ns, status.st_size)


def source_size(signature: tuple[object, ...]) -> int:
    """The number of bytes a signed source covers (its range, else the whole file)."""
    _, _, start, end, _, _, size = signature
    assert isinstance(start, int) and isinstance(size, int)
    return end - start if isinstance(end, int) else size

"""Read the bytes and text a `Source` points at, with errors that name the file and the reason.

Every reader goes through here, so bad input is handled once: missing files, permissions,
files that are still being written (empty or cut short), gzip, and text that is not UTF-8.
Container formats (an mlir-trace proto holding one IR per pass) register an entry reader.
"""

from __future__ import annotations

import errno
import gzip
import importlib
import os
import stat
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from workbench.model import Execution, Source, Step

if TYPE_CHECKING:  # the readers import this module for ReadError
    from workbench.formats.snapshot import Snapshot
    from workbench.hlo_ir import HloModule


class ReadError(Exception):
    """A file could not be read or understood. `str()` is `<file>: <reason>`."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = file
        self.reason = reason


_Input = TypeVar("_Input")
_Output = TypeVar("_Output")

# file suffix -> function(file bytes, entry index, file name) -> text of that entry
ENTRY_READERS: dict[str, Callable[[bytes, int, str], str]] = {}
# Modules that register entry readers when imported. A process that reads an entry without
# having scanned the dump (a replay worker) imports them on first need.
ENTRY_READER_MODULES = ("workbench.formats.mlir_trace",)


def _entry_reader(file: str) -> Callable[[bytes, int, str], str] | None:
    for suffix, reader in ENTRY_READERS.items():
        if file.endswith(suffix):
            return reader
    return None


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX; elsewhere there are no fifos to wait on


def _open_nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | _NONBLOCK)


def open_file(path: Path | str) -> BinaryIO:
    """Open a file of a dump for reading, in binary. A fifo is opened without waiting for a
    writer (a plain open would wait forever): with none it reads as an empty file, one being
    written is read to its end. A device is refused (OSError)."""
    handle = open(path, "rb", opener=_open_nonblocking)  # noqa: SIM115 (returned open)
    try:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise OSError(errno.ENODEV, "a device, not a file")
        if _NONBLOCK:
            os.set_blocking(handle.fileno(), True)
    except BaseException:
        handle.close()
        raise
    return handle


def read_bytes(root: Path, source: Source) -> bytes:
    """The bytes of `source` (a whole file or a byte range), gunzipped when the file is `.gz`."""
    path = root / source.file
    try:
        with open_file(path) as handle:
            if source.start or source.end is not None:
                handle.seek(source.start)
                size = None if source.end is None else source.end - source.start
                data = handle.read() if size is None else handle.read(size)
            else:
                data = handle.read()
    except FileNotFoundError:
        raise ReadError(source.file, "file not found (deleted since the folder was listed?)")\
            from None
    except PermissionError:
        raise ReadError(source.file, "permission denied") from None
    except IsADirectoryError:
        raise ReadError(source.file, "is a folder, not a file") from None
    except OSError as error:
        raise ReadError(source.file, f"cannot read: {error.strerror}") from None
    if source.file.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise ReadError(source.file, f"bad gzip data: {error}") from None
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


# ---- parsed HLO modules and snapshots, cached ----

class LruCache:
    """A thread-safe LRU of what was made from files (parsed modules, normalized texts), keyed
    by (path, mtime, size) among others: a file rewritten in place (a dump still being written)
    is read again. Bounded by entry count and by the total size of the files behind the
    entries (what is made from them is a few times their size)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> object | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: tuple, value: object, size: int) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while self._entries and (len(self._entries) > self.max_entries
                                     or self._bytes > self.max_bytes) and len(self._entries) > 1:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


# A parsed module takes about 20 times its file's size in memory (measured on the 6,000-line
# module of the large transformer dump), so 8 MB of files is about 160 MB of parsed modules.
PARSED = LruCache(max_entries=64, max_bytes=8 * 1024 * 1024)


def _file_key(root: Path, source: Source) -> tuple:
    """Cache key of a source; raises ReadError (as read_bytes would) when the file is gone."""
    try:
        status = os.stat(root / source.file)
    except FileNotFoundError:
        raise ReadError(source.file, "file not found (deleted since the folder was listed?)")\
            from None
    except PermissionError:
        raise ReadError(source.file, "permission denied") from None
    except OSError as error:
        raise ReadError(source.file, f"cannot read: {error.strerror}") from None
    return (str(root / source.file), source.start, source.end, source.entry,
            status.st_mtime_ns, status.st_size)


def read_hlo_file(root: Path, source: Source, kind: str) -> HloModule:
    """Parse one HLO file, uncached: `kind` is "proto" (`.hlo.pb[.gz]`) or "text"."""
    from workbench.formats.hlo_proto import read_hlo_proto
    from workbench.formats.hlo_text import parse_hlo_text

    if kind == "proto":
        data = read_bytes(root, source)
        if not data:
            raise ReadError(source.file, "empty file (still being written?)")
        return _translate(read_hlo_proto, data, source.file)
    return _translate(parse_hlo_text, read_text(root, source), source.file)


def read_snapshot_file(root: Path, source: Source) -> Snapshot:
    """Parse one snapshot file, uncached."""
    from workbench.formats.snapshot import read_snapshot

    data = read_bytes(root, source)
    if not data:
        raise ReadError(source.file, "empty file (still being written?)")
    return _translate(read_snapshot, data, source.file)


def _translate(reader: Callable[[_Input, str], _Output], data: _Input, file: str) -> _Output:
    """Run a reader; any failure it did not already name becomes a ReadError for `file`."""
    try:
        return reader(data, file)
    except ReadError:
        raise
    except RecursionError:
        raise ReadError(file, "nested too deeply to read") from None
    except Exception as error:  # a reader bug or an input it did not foresee: still a problem
        raise ReadError(file, f"cannot read: {type(error).__name__}: {error}") from None


def load_step_hlo(root: Path, step: Step) -> HloModule:
    """The HLO module of a step: from its proto when it has one (full constants), else its
    text; from the text too when the proto cannot be read (a dump still being written), and
    only if both fail the proto's error is raised. Cached; the module returned is shared, so
    treat it as read-only."""
    if step.ir != "hlo":
        raise ReadError(step.file or step.label, f"step {step.label} holds MLIR, not HLO")
    candidates = [(source, kind) for source, kind in ((step.proto, "proto"), (step.text, "text"))
                  if source is not None]
    if not candidates:
        raise ReadError(step.label, "step has no HLO file")
    first_error: ReadError | None = None
    for source, kind in candidates:
        try:
            return _cached_hlo(root, source, kind)
        except ReadError as error:
            first_error = first_error or error
    assert first_error is not None
    raise first_error


def _cached_hlo(root: Path, source: Source, kind: str) -> HloModule:
    key = ("hlo", *_file_key(root, source))
    module = PARSED.get(key)
    if module is None:
        module = read_hlo_file(root, source, kind)
        PARSED.put(key, module, key[-1])
    return module  # type: ignore[return-value]  (cache entries are typed by their key)


def load_snapshot(root: Path, execution: Execution) -> Snapshot:
    """The arguments, result and module of a recorded execution. Cached like load_step_hlo."""
    source = Source(execution.file)
    key = ("snapshot", *_file_key(root, source))
    snapshot = PARSED.get(key)
    if snapshot is None:
        snapshot = read_snapshot_file(root, source)
        PARSED.put(key, snapshot, key[-1])
    return snapshot  # type: ignore[return-value]  (cache entries are typed by their key)

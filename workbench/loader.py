"""Read the bytes and text a `Source` points at, with errors that name the file and the reason.

Every reader goes through here, so bad input is handled once: missing files, permissions,
files that are still being written (empty or cut short), gzip, and text that is not UTF-8.
Container formats (an mlir-trace proto holding one IR per pass) register an entry reader.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path

from workbench.model import Source


class ReadError(Exception):
    """A file could not be read or understood. `str()` is `<file>: <reason>`."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = file
        self.reason = reason


# file suffix -> function(file bytes, entry index, file name) -> text of that entry
ENTRY_READERS: dict[str, Callable[[bytes, int, str], str]] = {}


def read_bytes(root: Path, source: Source) -> bytes:
    """The bytes of `source` (a whole file or a byte range), gunzipped when the file is `.gz`."""
    path = root / source.file
    try:
        with open(path, "rb") as handle:
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
    """Strict UTF-8; the error says where the first bad byte is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReadError(file, f"not UTF-8 text (bad byte at offset {error.start})") from None


def read_text(root: Path, source: Source) -> str:
    """The text `source` points at: a file, a range of one, or an entry of a container."""
    if source.entry is not None:
        for suffix, reader in ENTRY_READERS.items():
            if source.file.endswith(suffix):
                return reader(read_bytes(root, Source(source.file)), source.entry, source.file)
        raise ReadError(source.file, "no reader knows entries of this kind of file")
    data = read_bytes(root, source)
    if not data:
        raise ReadError(source.file, "empty file (still being written?)")
    return decode_text(data, source.file)

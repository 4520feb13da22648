"""How much memory one evaluation may use, checked before anything is allocated.

A dump can declare arrays far larger than the machine (a 405-byte module may broadcast to
f32[30000,30000]; a 144-byte `.npy` header may claim 40 GB). Every array the replay makes is
sized from its declared shape first: inputs (`.npy` headers, fake data) and each intermediate
of the HLO evaluator (one array, and the most the program holds at once). Over the limit, the
step ends as `error: needs 7.2 GB (limit 6 GB) ...`, the rest of the run goes on.

The limit is `WORKBENCH_MEMORY_LIMIT` (bytes, or with a suffix: `4G`, `512M`), which the
commands' `--memory-limit` sets; by default a quarter of the machine's physical memory. An
environment variable, so worker processes (started later, from this process) see it too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import math
import mmap
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any

import numpy as np

from workbench.replay.errors import EvaluationError
from workbench.sizes import MEMORY_LIMIT_VARIABLE as ENVIRONMENT_VARIABLE
from workbench.sizes import default_memory_limit as default_limit
from workbench.sizes import format_size, memory_limit

__all__ = ["ENVIRONMENT_VARIABLE", "SMALLEST", "DiskArena", "OverMemoryLimit", "array_bytes",
           "check", "default_limit", "disk_array", "disk_room", "memory_limit",
           "return_freed_memory", "set_memory_limit"]

SMALLEST = 1 << 20  # arrays below this stay in memory: mapping them saves nothing


class OverMemoryLimit(EvaluationError):
    """An array, or the arrays live at once, would exceed the memory limit."""


def set_memory_limit(size: int) -> None:
    """Make `size` bytes the limit for this process and the workers it starts from now on."""
    os.environ[ENVIRONMENT_VARIABLE] = str(size)


def array_bytes(dtype: np.dtype, dims: tuple[int, ...]) -> int:
    """Bytes an array of `dims` elements of `dtype` takes (exact integers: no overflow)."""
    return math.prod(max(d, 0) for d in dims) * np.dtype(dtype).itemsize


def check(size: int, what: str, limit: int | None = None) -> None:
    """Raise `OverMemoryLimit` when `size` bytes exceed the limit."""
    limit = memory_limit() if limit is None else limit
    if size > limit:
        raise OverMemoryLimit(f"needs {format_size(size)} (limit {format_size(limit)}) for "
                              f"{what}; raise it with --memory-limit")


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def return_freed_memory() -> bool:
    """Hand the pages of freed values back to the system; whether any were (always False
    where the C library cannot).

    glibc serves an array below its mmap threshold from its heap, and raises that threshold
    to the size of each mmapped array freed (up to 32 MB): after the first evaluation
    almost every intermediate of a training step lives in the heap, and freeing it keeps
    the pages resident. A 2-layer GPT step's bisect held 990 MB after its noise stage
    where 390 MB were live. Trimming costs milliseconds; call it when an evaluation ends."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def disk_array(shape: tuple[int, ...], dtype: np.dtype, private: bool = False
               ) -> np.ndarray | None:
    """A zeroed, writable array of `shape` and `dtype` in a temporary file mapped read-write:
    memory the system writes back and drops as it needs. Its blocks are reserved on disk
    first where the file system can, so a full disk is found here (None), not by a crash
    when a page is written later. The file is unnamed, gone with its last mapping; within
    `shared_disk_arrays(folder)` it is named in that folder instead, so the array can be sent
    to another process as its file (`SharedDiskArray`), unless it is `private` to this
    process (never sent: unnamed all the same)."""
    size = max(1, int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
    folder = None if private else _shared_folder.get()
    try:
        if folder is None:
            with tempfile.TemporaryFile(prefix="workbench-range-") as file:
                _reserve(file.fileno(), size)
                return np.memmap(file, dtype=dtype, mode="r+", shape=shape)
        descriptor, path = tempfile.mkstemp(prefix="range-", dir=folder)
        with os.fdopen(descriptor, "r+b") as file:
            _reserve(file.fileno(), size)
        return SharedDiskArray(path, dtype=dtype, mode="r+", shape=shape)
    except OSError:
        return None


class DiskArena:
    """Arrays carved from a few large private `disk_array`s, not each in a file of its own:
    each mapping holds a file descriptor and counts against the system's mappings, and a
    model-size noise stage keeps a thousand ranges on disk. An array above a quarter of
    `chunk` bytes gets a file of its own (so a chunk wastes at most that at its end)."""

    def __init__(self, chunk: int = 256 * 2**20) -> None:
        self.chunk = chunk
        self._current: np.ndarray | None = None
        self._used = 0

    def array(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
        """A zeroed, writable array of `shape` and `dtype` on disk; None without room."""
        dtype = np.dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if size > self.chunk // 4:
            return disk_array(shape, dtype, private=True)
        if self._current is None or self._used + size > self.chunk:
            self._current = disk_array((self.chunk,), np.dtype(np.uint8), private=True)
            self._used = 0
            if self._current is None:
                return None
        start = self._used
        self._used += -(-size // 64) * 64  # each array aligned for any dtype
        return self._current[start:start + size].view(dtype).reshape(shape)


def disk_room() -> int:
    """Free bytes on the disk `disk_array` makes its files on (the temporary folder's)."""
    try:
        return shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        return 0


def _reserve(descriptor: int, size: int) -> None:
    try:
        os.posix_fallocate(descriptor, 0, size)
    except OSError as error:
        if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
        os.ftruncate(descriptor, size)  # a file system that cannot reserve: sparse


# The folder `disk_array` names its files in (`shared_disk_arrays`); None: unnamed files.
_shared_folder: ContextVar[str | None] = ContextVar("shared_folder", default=None)


@contextmanager
def shared_disk_arrays(folder: str | None) -> Iterator[None]:
    """Within it, `disk_array` makes `SharedDiskArray`s in `folder`: what a worker process
    makes for its parent (a noise stage's range of the result at model size). The parent owns
    the folder and removes it; each file is unlinked once the parent has mapped it."""
    token = _shared_folder.set(folder)
    try:
        yield
    finally:
        _shared_folder.reset(token)


class SharedDiskArray(np.memmap):
    """A `disk_array` in a named file: pickled as that file, so a worker process hands an
    array of model size to its parent without sending its bytes through a pipe (and holding
    them in the parent's memory). A view of it pickles its bytes, as any array does."""

    def __reduce__(self) -> str | tuple[Any, ...]:
        if not isinstance(self.base, mmap.mmap) or self.filename is None:
            return np.asarray(self).__reduce__()
        return (_mapped_again, (self.filename, self.dtype.str, self.shape))


def _mapped_again(path: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A pickled `SharedDiskArray`: its file mapped again, here, and unlinked (the mappings
    keep it until the last goes)."""
    array = np.memmap(path, dtype=np.dtype(dtype), mode="r+", shape=shape)
    with suppress(FileNotFoundError):
        os.unlink(path)
    return array

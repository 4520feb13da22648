"""Byte sizes as people write and read them: `4G`, `512M` in, `7.2 GB` out."""

from __future__ import annotations

import os
import re

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """`4G`, `512M`, `1.5G`, `1000000` (bytes) -> bytes; ValueError for anything else."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"not a size: {text!r} (examples: 4G, 512M, 1000000)")
    size = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if size <= 0:
        raise ValueError(f"a size limit must be positive, not {text!r}")
    return size


def size_from_environment(variable: str) -> int | None:
    """The size an environment variable sets, or None when it is unset or not a size (the CLI
    validates what it sets; a bad value set by hand falls back to the default)."""
    configured = os.environ.get(variable)
    if configured:
        try:
            return parse_size(configured)
        except ValueError:
            pass
    return None


MEMORY_LIMIT_VARIABLE = "WORKBENCH_MEMORY_LIMIT"  # see `replay.memory`
_FALLBACK_MEMORY_LIMIT = 4 << 30  # where the machine's memory cannot be read


def default_memory_limit() -> int:
    """A quarter of the machine's physical memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_MEMORY_LIMIT


def memory_limit() -> int:
    """The memory limit in force (`--memory-limit`, `replay.memory`): the environment's, else
    the default. Here so that readers below the replay (a snapshot's) can be bounded by it."""
    configured = size_from_environment(MEMORY_LIMIT_VARIABLE)
    return default_memory_limit() if configured is None else configured


def format_size(size: int) -> str:
    """Bytes as a person reads them: `7.2 GB`, `512 MB`, `12 KB`."""
    for unit, scale in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"

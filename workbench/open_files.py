"""As many open files as the system lets this process have.

A model-size replay keeps values, and the noise stage the ranges it cannot hold, in files
mapped from disk, and each mapping holds a file descriptor: a GPT-2-small step's bisection
held 1,665 at once, past the soft limit of 1,024 many systems start a process with.
The hard limit is the system's word on it; the soft one is only a default, so the command
raises it before it starts (worker processes inherit it).
"""

from __future__ import annotations

import resource
from contextlib import suppress

# The soft limit asked for where the hard one is unlimited.
UNLIMITED_WANTED = 1 << 16


def allow_open_files() -> None:
    """Raise this process's soft limit on open files to its hard limit (where unlimited, to
    `UNLIMITED_WANTED`); never lower it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_WANTED if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with suppress(ValueError, OSError):  # a system that refuses keeps its default
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))

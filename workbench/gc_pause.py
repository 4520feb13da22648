"""Pausing Python's cyclic garbage collector around bursts of allocation that form no cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for a while; reference counting still frees everything.

    Indexing 100,000 names or normalizing and diffing two 6,000-line files allocates many
    lists, tuples and objects and no cycles; left running, the collector passes over everything
    built so far every few thousand allocations (a third of the time of either). The objects
    still alive when the pause ends are examined once, at the next collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

"""One home for what is derived from a dump's files: parsed HLO modules and snapshots,
normalized texts, op counts, source locations, and whether a step changed the IR.

Every entry is keyed by the signature of the files it was made from (path, byte range or
entry, modification time, size: `sources.file_signature`) and by the kind of fact, so a file
rewritten in place (a dump still being written) is read again without anyone invalidating
anything; and the store is bounded by an estimate of the memory its entries take, so browsing
a large dump stays within a budget whatever mix of facts it asks for. The CLI, the TUI and
the breakpoint debugger share the one store `FACTS`. Each kind of fact (`FactKind`) is
declared beside the code that computes it (`loader`: parsed modules and snapshots;
`diff.steps`: normalized texts and changed flags; `stats`: op counts; `debug.facts`: source
locations), which asks the store first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast

from workbench.model import Source
from workbench.sources import ReadError, file_signature, source_size

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class LruCache(Generic[Key, Value]):
    """A thread-safe LRU bounded by entry count and by the total cost of its entries (each
    entry's cost is given when it is put). The oldest entries go first; the newest one always
    stays, whatever its cost."""

    def __init__(self, max_entries: int, max_cost: int) -> None:
        self.max_entries = max_entries
        self.max_cost = max_cost
        self._entries: OrderedDict[Key, tuple[Value, int]] = OrderedDict()
        self._cost = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def cost(self) -> int:
        return self._cost

    def get(self, key: Key) -> Value | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Key, value: Value, cost: int) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._cost -= old[1]
            self._entries[key] = (value, cost)
            self._cost += cost
            while len(self._entries) > 1 and (len(self._entries) > self.max_entries
                                              or self._cost > self.max_cost):
                _, (_, dropped) = self._entries.popitem(last=False)
                self._cost -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._cost = 0


@dataclass(frozen=True)
class FactKind(Generic[Value]):
    """One kind of derived fact: the pool of the store its entries go to, and what an entry
    costs in memory (`per_byte` times the bytes of the files it was made from, plus `fixed`)."""

    name: str
    pool: str
    per_byte: float
    fixed: int = 0

    def cost(self, source_bytes: int) -> int:
        return int(self.per_byte * source_bytes) + self.fixed


class FactStore:
    """Derived facts of any kind, keyed by (kind, file signatures, parameters). The memory
    budget is split into pools, each an LRU of its own, so that one kind of fact cannot push
    out the others (walking a timeline's normalized texts keeps the parsed modules a replay
    needs, and the op counts of every step seen). A kind's entries hold values of its type
    only (the kind is part of the key), which is what makes `get` typed."""

    def __init__(self, budgets: dict[str, tuple[int, int]]) -> None:
        """`budgets`: pool -> (most entries, most estimated bytes)."""
        self.pools: dict[str, LruCache[tuple[object, ...], object]] = {
            pool: LruCache(entries, cost) for pool, (entries, cost) in budgets.items()}

    def __len__(self) -> int:
        return sum(len(pool) for pool in self.pools.values())

    @property
    def cost(self) -> int:
        """The estimated memory of every entry."""
        return sum(pool.cost for pool in self.pools.values())

    def signature(self, root: Path, sources: Sequence[Source]) -> tuple[tuple[object, ...], ...]:
        """The signatures of `sources` (raises ReadError when one is gone)."""
        return tuple(file_signature(root, source) for source in sources)

    def get(self, kind: FactKind[Value], signature: tuple[object, ...],
            params: tuple[Hashable, ...] = ()) -> Value | None:
        return cast("Value | None", self.pools[kind.pool].get((kind.name, signature, params)))

    def put(self, kind: FactKind[Value], signature: tuple[tuple[object, ...], ...],
            value: Value, params: tuple[Hashable, ...] = ()) -> None:
        size = sum(source_size(s) for s in signature)
        self.pools[kind.pool].put((kind.name, signature, params), value, kind.cost(size))

    def known(self, kind: FactKind[Value], root: Path, sources: Sequence[Source],
              params: tuple[Hashable, ...] = ()) -> Value | None:
        """The fact if it is known for the files as they are now; None otherwise (also when a
        file is gone). Reads nothing but the files' status."""
        try:
            signature = self.signature(root, sources)
        except ReadError:
            return None
        return self.get(kind, signature, params)

    def make(self, kind: FactKind[Value], root: Path, sources: Sequence[Source],
             compute: Callable[[], Value], params: tuple[Hashable, ...] = ()) -> Value:
        """The fact of `kind` about `sources`, computed by `compute` unless known."""
        signature = self.signature(root, sources)
        value = self.get(kind, signature, params)
        if value is None:
            value = compute()
            self.put(kind, signature, value, params)
        return value

    def clear(self) -> None:
        for pool in self.pools.values():
            pool.clear()


MB = 1024 * 1024
# The pools, about 260 MB in all: parsed HLO modules and snapshots (160 MB: 8 MB of files at
# 20 times their size), normalized texts (40 MB), and the small facts of every step seen (op
# counts, locations, changed flags: about 1.5 KB a step, so some 40,000 steps).
PARSED, TEXTS, SMALL = "parsed", "texts", "small"
FACTS = FactStore({PARSED: (64, 160 * MB), TEXTS: (64, 40 * MB), SMALL: (200_000, 64 * MB)})

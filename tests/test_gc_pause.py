"""The collector pause: nothing collected during it, nothing examined right after it, nothing
lost for good."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from workbench.gc_pause import gc_paused


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every collection that starts while the test runs."""
    started: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        yield started
    finally:
        gc.callbacks.remove(record)


def test_no_collection_during_or_right_after_a_pause(collections: list[int]) -> None:
    assert gc.isenabled()
    with gc_paused():
        kept = [[n] for n in range(100_000)]  # far past the youngest generation's threshold
        assert not gc.isenabled()
    assert gc.isenabled()
    more = [[n] for n in range(10)]  # would start a collection over all of `kept` before
    assert collections == []
    assert len(kept) + len(more) == 100_010


def test_cycles_made_during_a_pause_are_still_collected() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    gc.collect()
    with gc_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
    assert gc.collect() >= 2  # moved to the oldest generation, not frozen for good
    assert gc.get_freeze_count() == 0


def test_objects_frozen_by_someone_else_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            _ = [[n] for n in range(1000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_nested_pause_leaves_the_collector_off() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()

"""The collector pause: nothing collected during it, nothing examined right after it, nothing
lost for good."""

from __future__ import annotations

import gc

from workbench.gc_pause import gc_paused


def test_objects_made_during_a_pause_leave_the_youngest_generation() -> None:
    """Left there, the next allocation would start a collection over all of them."""
    assert gc.isenabled()
    with gc_paused():
        kept = [[n] for n in range(50_000)]  # far past the youngest generation's threshold
        assert not gc.isenabled()
    assert gc.isenabled()
    marker = id(kept[0])
    assert marker not in {id(o) for o in gc.get_objects(generation=0)}
    assert marker in {id(o) for o in gc.get_objects(generation=2)}
    assert gc.get_count()[0] < 1000  # no collection is due


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

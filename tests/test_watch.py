"""Live watch without the UI: settling of half-written files, batching, deletions, model deltas."""

from __future__ import annotations

import itertools
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE, wait_for
from workbench.watch import (
    ChangeBatch,
    DumpChange,
    LiveIndex,
    SettlingQueue,
    WatchdogWatcher,
    watch_index,
)

LN = "xla/layernorm-broken-fusion"


def _ln_files(corpus: Path, module: str) -> list[Path]:
    """The files (not the PJRT folder) of one module of the layernorm-broken-fusion dump."""
    return sorted(f for f in (corpus / LN).glob(f"{module}.*") if f.is_file())


class FakeDisk:
    """stat() answers for the settling logic: path -> (size, mtime_ns) or missing."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, int]] = {}

    def stat(self, path: str) -> tuple[int, int] | None:
        return self.files.get(path)


def test_settled_file_is_reported_once_stable() -> None:
    queue, disk = SettlingQueue(quiet=0.1), FakeDisk()
    disk.files["a.txt"] = (10, 1)
    queue.touched("a.txt", now=0.0)
    assert not queue.collect(0.05, disk.stat)  # inside the quiet time
    assert not queue.collect(0.2, disk.stat)  # first look records the signature
    batch = queue.collect(0.3, disk.stat)
    assert batch.changed == {"a.txt"} and not batch.deleted
    assert len(queue) == 0


def test_file_still_being_written_is_retried() -> None:
    queue, disk = SettlingQueue(quiet=0.1), FakeDisk()
    queue.touched("big.pb", now=0.0)
    for step, size in enumerate((100, 200, 300)):
        disk.files["big.pb"] = (size, step)
        assert not queue.collect(0.2 + step * 0.1, disk.stat)
    assert queue.collect(0.6, disk.stat).changed == {"big.pb"}


def test_empty_file_waits_for_content_then_grace() -> None:
    queue, disk = SettlingQueue(quiet=0.1, empty_grace=1.0), FakeDisk()
    disk.files["x.txt"] = (0, 1)
    queue.touched("x.txt", now=0.0)
    assert not queue.collect(0.2, disk.stat)
    assert not queue.collect(0.4, disk.stat)  # stable but empty: held back
    assert queue.collect(1.1, disk.stat).changed == {"x.txt"}  # empty for good


def test_deleted_before_settling_and_folder_deletion() -> None:
    queue, disk = SettlingQueue(quiet=0.0), FakeDisk()
    queue.touched("gone.txt", now=0.0)
    queue.touched("d/a.txt", now=0.0)
    queue.removed("d")
    batch = queue.collect(1.0, disk.stat)
    assert batch.deleted == {"gone.txt", "d"}
    assert not batch.changed and len(queue) == 0


def test_touch_after_delete_cancels_the_deletion() -> None:
    queue, disk = SettlingQueue(quiet=0.0), FakeDisk()
    queue.removed("a.txt")
    queue.touched("a.txt", now=0.0)
    disk.files["a.txt"] = (3, 3)
    queue.collect(0.1, disk.stat)
    assert queue.collect(0.2, disk.stat) == ChangeBatch(frozenset({"a.txt"}), frozenset())


def test_live_index_deltas(corpus: Path, tmp_path: Path) -> None:
    for file in _ln_files(corpus, "module_0000"):
        shutil.copy(file, tmp_path)
    live = LiveIndex(tmp_path)
    first = live.scan()
    assert first.added == ["module_0000"] and len(first.dump.modules) == 1

    new = _ln_files(corpus, "module_0010")
    for file in new:
        shutil.copy(file, tmp_path)
    change = live.apply(ChangeBatch(frozenset(f.name for f in new)))
    assert change is not None and change.added == ["module_0010"] and not change.changed
    ln = change.dump.find_module("jit_ln")
    assert sum(1 for s in ln.steps if s.kind == "pass") == 36

    step_28 = next(f.name for f in new if ".0028." in f.name and f.name.endswith(".txt"))
    change = live.apply(ChangeBatch(deleted=frozenset({step_28})))
    assert change is not None and change.changed == ["module_0010"]
    assert not any(s.file == step_28 for s in change.dump.find_module("jit_ln").steps)

    assert live.apply(ChangeBatch(deleted=frozenset({"never-there.txt"}))) is None
    gone = frozenset(f.name for f in _ln_files(corpus, "module_0000"))
    change = live.apply(ChangeBatch(deleted=gone))
    assert change is not None and change.removed == ["module_0000"]


def test_live_index_scan_reports_progress(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("workbench.index.PROGRESS_EVERY", 20)
    seen: list[tuple[int, int]] = []
    live = LiveIndex(corpus / LN)
    change = live.scan(lambda dump, n: seen.append((len(dump.modules), n)), progress_interval=0)
    counts = [n for _, n in seen]
    assert len(counts) >= 2 and counts == sorted(counts) and counts[-1] <= live.file_count
    # Partial models are made as the listing grows by half: their cost stays bounded.
    assert all(later >= 1.5 * earlier for earlier, later in itertools.pairwise(counts))
    assert all(modules <= 7 for modules, _ in seen)
    assert len(change.dump.modules) == 7


def test_live_index_on_one_file(corpus: Path, tmp_path: Path) -> None:
    file = next(f for f in _ln_files(corpus, "module_0010") if f.name.endswith("0028."
                "HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt"))
    shutil.copy(file, tmp_path)
    (tmp_path / "other.txt").write_text("x")
    live = LiveIndex(tmp_path / file.name)
    assert live.scan().dump.others == []
    assert live.apply(ChangeBatch(frozenset({"other.txt"}))) is None


def test_watchdog_watcher_uses_the_queue_it_is_given(tmp_path: Path) -> None:
    queue = SettlingQueue(quiet=2.0)  # empty, as every new queue is
    assert WatchdogWatcher(tmp_path, queue=queue).queue is queue


class _RecordingQueue(SettlingQueue):
    """A settling queue that remembers every path an event touched."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def touched(self, path: str, now: float) -> None:
        self.seen.add(path)
        super().touched(path, now)


def test_watchdog_reports_copies_and_deletions(corpus: Path, tmp_path: Path,
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """Real files copied into a watched folder reach the model, batched; a deletion too.

    Nothing here depends on speed. The watch is armed when `watch_index` returns. Every change
    is held until the copies are made and the watcher has seen all their events (the last
    file is moved in whole, one event after all the others): a burst spread over any time
    comes as one held batch and what settles after it. The model and the deletion are looked
    for in the changes delivered, not in the listing (which grows before its change is)."""
    live = LiveIndex(tmp_path)
    live.scan()
    changes: list[DumpChange] = []
    released = threading.Event()

    def on_change(change: DumpChange) -> None:
        released.wait(PATIENCE)
        changes.append(change)

    queue = _RecordingQueue()
    watcher = watch_index(live, on_change, WatchdogWatcher(tmp_path, queue=queue))
    try:
        *copied, moved = files = _ln_files(corpus, "module_0010")
        for file in copied:
            shutil.copy(file, tmp_path)
        staged = shutil.copy(moved, tmp_path_factory.mktemp("staging"))
        os.replace(staged, tmp_path / moved.name)
        wait_for(lambda: moved.name in queue.seen, "the watcher's events for every file")
        released.set()

        names = {file.name for file in files}
        wait_for(lambda: names <= set().union(*(change.files_changed for change in changes)),
                 "every copied file delivered")
        ln = changes[-1].dump.find_module("jit_ln")
        assert len(ln.executions) == 1
        assert sum(1 for s in ln.steps if s.kind == "pass") == 36
        assert live.file_count == len(files)
        # One batch held while the copies were made; after it a file is reported at its second
        # look once quiet, and a batch's next look comes `min_interval` later, when every file
        # is quiet: at most three more. A burst is batched, not one update per file.
        assert len(changes) <= 4, [len(change.files_changed) for change in changes]

        seen = len(changes)
        (tmp_path / files[0].name).unlink()
        wait_for(lambda: any(files[0].name in change.files_removed
                             for change in changes[seen:]), "the deletion reported")
        assert set().union(*(change.files_removed for change in changes[seen:])) == \
            {files[0].name}
        assert live.file_count == len(files) - 1
    finally:
        watcher.stop()


def test_watchdog_waits_for_a_file_being_written(tmp_path: Path) -> None:
    live = LiveIndex(tmp_path)
    live.scan()
    changes: list[DumpChange] = []
    # Writes 0.05 s apart look settled only after a pause of `quiet`: 2 s leaves a busy
    # machine room to deschedule the writer between two writes.
    watcher = watch_index(live, changes.append,
                          WatchdogWatcher(tmp_path, queue=SettlingQueue(quiet=2.0)))
    name = "module_0001.jit_f.before_optimizations.txt"
    try:
        with open(tmp_path / name, "w") as handle:
            for _ in range(12):
                handle.write("HloModule jit_f\n")
                handle.flush()
                time.sleep(0.05)
                assert not changes, "a file still growing was reported"
        wait_for(lambda: changes, "the finished file reported")
        assert changes[0].added == ["module_0001"]
    finally:
        watcher.stop()


def test_live_index_rebuilds_without_making_steps(corpus: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing, its signatures and counts come from the index's records; a step's proto
    going away still changes its module."""
    from workbench.formats import xla_dump

    made: list[tuple] = []
    make = xla_dump._pair_step
    monkeypatch.setattr(xla_dump, "_pair_step", lambda key, files: made.append(key) or
                        make(key, files))
    for file in _ln_files(corpus, "module_0010"):
        shutil.copy(file, tmp_path)
    live = LiveIndex(tmp_path)
    module = live.scan().dump.find_module("jit_ln")
    assert module.pass_step_count == 36 and made == []
    proto = next(f.name for f in _ln_files(corpus, "module_0010")
                 if ".0028." in f.name and f.name.endswith(".hlo.pb"))
    change = live.apply(ChangeBatch(deleted=frozenset({proto})))
    assert change is not None and change.changed == ["module_0010"] and made == []
    steps = change.dump.find_module("jit_ln").steps
    assert len(made) == 36 and len(steps) == change.dump.find_module("jit_ln").step_count
    step_28 = next(s for s in steps if s.xla_step == 28)
    assert step_28.proto is None and step_28.text is not None


def _wait_for(condition, seconds: float = PATIENCE) -> bool:  # type: ignore[no-untyped-def]  # any condition that returns a truth value
    """Whether `condition()` came true within a generous time (polled, not timed)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_watch_follows_a_folder_deleted_and_made_again(corpus: Path, tmp_path: Path) -> None:
    """What test runners do: the dump folder is removed and written again. The live index
    empties, then lists the new folder's modules (the old watch died with the old folder)."""
    root = tmp_path / "dump"
    root.mkdir()
    for file in _ln_files(corpus, "module_0010"):
        shutil.copy(file, root)
    live = LiveIndex(root)
    live.scan()
    watcher = watch_index(live, lambda change: None)
    try:
        first = live.file_count
        (root / "probe.txt").write_text("probe\n")  # the watch is live once this is seen
        assert _wait_for(lambda: live.file_count == first + 1)
        shutil.rmtree(root)
        assert _wait_for(lambda: live.file_count == 0), "the deletion was not seen"
        assert live.dump.modules == []
        root.mkdir()
        files = _ln_files(corpus, "module_0004")
        for file in files:
            shutil.copy(file, root)
        assert _wait_for(lambda: live.file_count == len(files)), "the new folder is not watched"
        assert [m.name for m in live.dump.modules] == ["jit_true_divide"]
        (root / files[0].name).unlink()  # and changes inside it are seen
        assert _wait_for(lambda: live.file_count == len(files) - 1)
    finally:
        watcher.stop()


def test_live_index_takes_what_it_is_told_by_the_listing_rules(corpus: Path,
                                                              tmp_path: Path) -> None:
    """A link out of the dump the watcher reports is a problem, as in `ls`, not a module."""
    root = tmp_path / "dump"
    root.mkdir()
    for file in _ln_files(corpus, "module_0010"):
        shutil.copy(file, root)
    secret = tmp_path / "secret.txt"
    secret.write_text("HloModule secret\n")
    live = LiveIndex(root)
    live.scan()
    name = "module_0077.jit_secret.before_optimizations.txt"
    (root / name).symlink_to(secret)
    change = live.apply(ChangeBatch(changed=frozenset({name})))
    assert change is not None
    assert [m.name for m in change.dump.modules] == ["jit_ln"]
    assert [(p.file, p.reason) for p in change.dump.problems] == [
        (name, f"link outside the dump: {secret} (read it with --follow-links)")]


def test_files_being_written_are_reported_until_they_settle(corpus: Path,
                                                             tmp_path: Path) -> None:
    """The queue names the files it holds; the live index passes on those it lists (a new
    file is not listed until it settles), and a change of them alone is a change."""
    queue, disk = SettlingQueue(quiet=0.1), FakeDisk()
    queue.touched("a.txt", now=0.0)
    disk.files["a.txt"] = (10, 1)
    assert queue.pending() == {"a.txt"}
    queue.collect(0.2, disk.stat)
    assert queue.collect(0.3, disk.stat).changed == {"a.txt"} and queue.pending() == set()

    for file in _ln_files(corpus, "module_0010"):
        shutil.copy(file, tmp_path)
    live = LiveIndex(tmp_path)
    live.scan()
    step = next(f.name for f in _ln_files(corpus, "module_0010") if ".0028." in f.name)
    change = live.apply(ChangeBatch(writing=frozenset({step, "module_0011.new.txt"})))
    assert change is not None and change.writing == {step} == live.writing
    assert (change.added, change.removed, change.changed, change.files_changed) == \
        ([], [], [], frozenset())
    assert live.apply(ChangeBatch(writing=frozenset({step}))) is None  # nothing new
    done = live.apply(ChangeBatch(changed=frozenset({step})))
    assert done is not None and done.writing == frozenset() and step in done.files_changed

    # Held back before the first scan listed it: the scan's model marks it.
    early = LiveIndex(tmp_path)
    assert early.apply(ChangeBatch(writing=frozenset({step}))) is None
    assert early.scan().writing == {step}

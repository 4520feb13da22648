"""Keep the model of a dump folder up to date while a compiler or a test run is writing it.

Three parts, none of them knows about the UI:

- `SettlingQueue` decides when a changed file is ready to report: a file is reported once its
  size and modification time stayed the same across two looks after a short quiet time, so a
  file still being written is retried on the next look instead of being read half-done. An empty
  file is held back a little longer (compilers create a file, then fill it). The files it holds
  are reported too, as `writing`: a file the listing already has (the first scan found it
  half-written, or it is being rewritten) is marked as being written until it settles.
- `FolderWatcher` is the small interface the app uses; `WatchdogWatcher` implements it with
  watchdog (inotify and kin), turns events into `ChangeBatch`es from a background thread and
  batches bursts: at most one batch per `min_interval`, and a slow consumer simply gets bigger
  batches.
- `LiveIndex` keeps the folder's file listing and rebuilds the model from names after each
  batch (`index.claim_paths`), reporting which modules appeared, disappeared or changed.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.index import claim_paths, classify_entry, list_files
from workbench.model import Dump, Module, Problem

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver, ObservedWatch

FileSignature = tuple[int, int]  # (size, mtime_ns)


@dataclass(frozen=True)
class ChangeBatch:
    """Settled changes under a watched folder, as POSIX paths relative to it.

    `changed` files exist and stopped changing (new or rewritten); `deleted` paths are gone and
    may name a folder, meaning everything under it; `writing` files are still changing (held
    back until they settle), all of them each time.
    """

    changed: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    writing: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.changed or self.deleted)


@dataclass
class _Pending:
    first_seen: float
    last_event: float
    signature: FileSignature | None = None


class SettlingQueue:
    """Holds changed paths until their files stop changing. Pure: time and stat are passed in."""

    def __init__(self, quiet: float = 0.15, empty_grace: float = 2.0) -> None:
        self.quiet = quiet
        self.empty_grace = empty_grace
        self._pending: dict[str, _Pending] = {}
        self._deleted: set[str] = set()

    def __len__(self) -> int:
        return len(self._pending) + len(self._deleted)

    def touched(self, path: str, now: float) -> None:
        """A file was created, written or moved in."""
        self._deleted.discard(path)
        pending = self._pending.get(path)
        if pending is None:
            self._pending[path] = _Pending(first_seen=now, last_event=now)
        else:
            pending.last_event = now

    def pending(self) -> frozenset[str]:
        """The files changed and not yet reported: still being written, or not looked at yet."""
        return frozenset(self._pending)

    def removed(self, path: str) -> None:
        """A file or folder was deleted or moved out; "" is the watched folder itself."""
        prefix = path + "/" if path else ""
        for pending_path in [p for p in self._pending if p == path or p.startswith(prefix)]:
            del self._pending[pending_path]
        self._deleted.add(path)

    def collect(self, now: float, stat: Callable[[str], FileSignature | None]) -> ChangeBatch:
        """The changes ready to report now; files still changing stay queued."""
        changed: set[str] = set()
        deleted = set(self._deleted)
        self._deleted.clear()
        for path, pending in list(self._pending.items()):
            if now - pending.last_event < self.quiet:
                continue
            signature = stat(path)
            if signature is None:  # gone before it settled
                del self._pending[path]
                deleted.add(path)
                continue
            if signature != pending.signature:  # first look, or still being written
                pending.signature = signature
                continue
            if signature[0] == 0 and now - pending.first_seen < self.empty_grace:
                continue
            del self._pending[path]
            changed.add(path)
        return ChangeBatch(frozenset(changed), frozenset(deleted))


class FolderWatcher(ABC):
    """Reports settled changes under a folder by calling `on_batch` from its own thread."""

    polling = False  # True when it polls the folder (changes show later than with OS events)

    @abstractmethod
    def start(self, on_batch: Callable[[ChangeBatch], None]) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...


class WatchdogWatcher(FolderWatcher):
    """A `FolderWatcher` on watchdog's native observer (polling when the OS refuses a watch).

    `only` restricts the watch to one file of the folder (the app opened a single log file).
    """

    def __init__(
        self,
        root: Path,
        *,
        only: str | None = None,
        tick: float = 0.1,
        min_interval: float = 0.3,
        queue: SettlingQueue | None = None,
    ) -> None:
        self.root = Path(root)
        self.only = only
        self.tick = tick
        self.min_interval = min_interval
        # Not `queue or ...`: a SettlingQueue has a length, and every new one is empty (falsy).
        self.queue = queue if queue is not None else SettlingQueue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._observer: BaseObserver | None = None
        self._handler: FileSystemEventHandler | None = None
        self._root_watch: ObservedWatch | None = None  # the observer's watch of `root`
        self._thread: threading.Thread | None = None

    def start(self, on_batch: Callable[[ChangeBatch], None]) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                watcher._on_event(event)

        class ParentHandler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                watcher._on_parent_event(event)

        self._handler = Handler()
        try:
            observer = Observer()
            self._root_watch = observer.schedule(self._handler, os.fspath(self.root),
                                                 recursive=self.only is None)
            observer.start()
        except OSError:  # inotify watch limit and the like
            self.polling = True
            observer = PollingObserver(timeout=2.0)
            self._root_watch = observer.schedule(self._handler, os.fspath(self.root),
                                                 recursive=self.only is None)
            observer.start()
        self._observer = observer
        if self.only is None and self.root.parent != self.root:
            # The folder itself deleted and made again (what test runners do): only its
            # parent sees that.
            with contextlib.suppress(OSError):
                observer.schedule(ParentHandler(), os.fspath(self.root.parent), recursive=False)
        self._thread = threading.Thread(
            target=self._run, args=(on_batch,), name="workbench-watch", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2.0)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)

    def _relative(self, path: str | bytes) -> str | None:
        text = os.fsdecode(path)
        relative = os.path.relpath(text, self.root)
        if relative == "." or relative.startswith(".."):
            return None
        relative = relative.replace(os.sep, "/")
        if self.only is not None and relative != self.only:
            return None
        return relative

    def _on_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        now = time.monotonic()
        source = self._relative(event.src_path)
        with self._lock:
            if kind == "moved":
                if source is not None:
                    self.queue.removed(source)
                destination = self._relative(event.dest_path)
                if destination is not None:
                    self._touch(destination, event.is_directory, now)
            elif source is None:
                return
            elif kind == "deleted":
                self.queue.removed(source)
            else:  # created, modified, closed
                self._touch(source, event.is_directory, now)

    def _on_parent_event(self, event: FileSystemEvent) -> None:
        """The watched folder deleted or moved away (everything in it is gone), or made or
        moved in again (watched anew, and everything in it is new)."""
        root = os.path.abspath(self.root)
        source = os.path.abspath(os.fsdecode(event.src_path))
        destination = getattr(event, "dest_path", "")
        destination = os.path.abspath(os.fsdecode(destination)) if destination else ""
        kind = event.event_type
        with self._lock:
            if source == root and kind in ("deleted", "moved"):
                self.queue.removed("")
            if (source == root and kind == "created") or destination == root:
                self._watch_again()
                self._touch("", True, time.monotonic())

    def _watch_again(self) -> None:
        """Watch the folder made again under the same name: the old watch died with the old
        folder."""
        observer = self._observer
        if observer is None or self._handler is None or not self.root.is_dir():
            return
        with contextlib.suppress(KeyError, OSError):
            if self._root_watch is not None:
                observer.unschedule(self._root_watch)
        with contextlib.suppress(OSError):
            self._root_watch = observer.schedule(self._handler, os.fspath(self.root),
                                                 recursive=True)

    def _touch(self, path: str, is_directory: bool, now: float) -> None:
        if not is_directory:
            self.queue.touched(path, now)
            return
        # A folder moved or copied in as a whole: its files raise no events of their own.
        prefix = f"{path}/" if path else ""
        for file in list_files(self.root / path, []):
            self.queue.touched(prefix + file, now)

    def _stat(self, path: str) -> FileSignature | None:
        try:
            info = os.stat(self.root / path)
        except OSError:
            return None
        return (info.st_size, info.st_mtime_ns)

    def _run(self, on_batch: Callable[[ChangeBatch], None]) -> None:
        last_batch = 0.0
        writing: frozenset[str] = frozenset()  # as last reported
        while not self._stop.wait(self.tick):
            now = time.monotonic()
            if now - last_batch < self.min_interval:
                continue
            with self._lock:
                if not len(self.queue) and not writing:
                    continue
                batch = self.queue.collect(now, self._stat)
                still = self.queue.pending()
            if batch or still != writing:
                last_batch, writing = now, still
                on_batch(ChangeBatch(batch.changed, batch.deleted, still))


@dataclass
class DumpChange:
    """What one update did to the model: module keys added, removed and changed, and files."""

    dump: Dump
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    files_changed: frozenset[str] = frozenset()
    files_removed: frozenset[str] = frozenset()
    writing: frozenset[str] = frozenset()  # listed files still being written


def module_signature(module: Module) -> tuple:
    """Everything the listing says about a module; equal signatures mean nothing to redraw."""
    return (
        module.id,
        module.name,
        module.format,
        module.steps_key(),  # does not make steps the index deferred
        tuple(e.file for e in module.executions),
        tuple(a.file for a in module.artifacts),
    )


class LiveIndex:
    """The file listing of a dump folder (or of one file), and the model claimed from it.

    Thread-safe: the initial scan runs in a worker while the watcher's thread may already call
    `apply`; the lock makes the batch wait for the scan.
    """

    def __init__(self, target: Path | str, *, expand: bool = True) -> None:
        target = Path(target)
        self.single_file = target.name if target.is_file() else None
        self.root = target.parent if self.single_file else target
        self.expand = expand
        self._paths: set[str] = set()
        self._listing_problems: list[Problem] = []
        self._signatures: dict[str, tuple] = {}
        self.writing: frozenset[str] = frozenset()  # listed files still being written
        self._unsettled: frozenset[str] = frozenset()  # as the watcher last reported them
        self._lock = threading.Lock()
        self.dump = Dump(root=self.root)

    def scan(
        self,
        progress: Callable[[Dump, int], object] | None = None,
        progress_interval: float = 0.25,
    ) -> DumpChange:
        """List the folder and claim its files; `progress(partial_dump, files_listed)` is called
        now and then while a large folder is being listed, with the modules claimed so far."""
        with self._lock:
            problems: list[Problem] = []
            if self.single_file:
                paths = [self.single_file]
            elif not self.root.is_dir():
                problems.append(Problem(".", f"no such folder: {self.root}"))
                paths = []
            else:
                last = time.monotonic()
                claimed = 0  # files in the last partial model

                def listed(found: list[str]) -> None:
                    # A partial model costs a claim of everything found so far: make one only
                    # when the listing grew by half since the last, so all of them together
                    # cost about two claims of the whole folder.
                    nonlocal last, claimed
                    now = time.monotonic()
                    if progress is None or now - last < progress_interval or \
                            len(found) < claimed * 1.5:
                        return
                    last, claimed = now, len(found)
                    partial = claim_paths(Dump(root=self.root), sorted(found), expand=False)
                    progress(partial, len(found))

                paths = list_files(self.root, problems, progress=listed)
            self._paths = set(paths)
            self._listing_problems = problems
            return self._rebuild(frozenset(paths), frozenset(), sorted_paths=paths)

    def apply(self, batch: ChangeBatch) -> DumpChange | None:
        """Fold a batch of changes into the listing; None when the model did not change."""
        with self._lock:
            if self.single_file:
                batch = ChangeBatch(
                    frozenset(p for p in batch.changed if p == self.single_file),
                    frozenset(p for p in batch.deleted if p == self.single_file),
                    frozenset(p for p in batch.writing if p == self.single_file),
                )
            prefixes = tuple(p + "/" if p else "" for p in batch.deleted)  # "": all
            removed = {p for p in self._paths if p in batch.deleted or p.startswith(prefixes)}
            self._paths -= removed
            changed = self._classify(batch.changed, removed)
            self._paths |= changed
            self._unsettled = batch.writing
            if not removed and not changed:
                writing = self._listed_unsettled()
                if writing == self.writing:
                    return None
                self.writing = writing  # the same model, other files being written
                return DumpChange(dump=self.dump, writing=writing)
            return self._rebuild(batch.changed, frozenset(removed))

    def _listed_unsettled(self) -> frozenset[str]:
        """The listed files the watcher holds back (a file not listed yet is not shown)."""
        return frozenset(p for p in self._unsettled if p in self._paths)

    def _classify(self, changed: frozenset[str], removed: set[str]) -> set[str]:
        """The changed paths the listing takes, by the rules `list_files` applies (a FIFO or a
        link out of the dump is listed as a problem, a link to a folder not at all); the
        listing's problems updated for them and for the removed paths."""
        taken: set[str] = set()
        reasons: dict[str, str] = {}
        for path in changed:
            how, reason = ("file", None) if self.single_file else classify_entry(self.root, path)
            if how in ("file", "problem"):
                taken.add(path)
            if reason is not None:
                reasons[path] = reason
        if reasons or any(p.file in changed or p.file in removed
                          for p in self._listing_problems):
            kept = [p for p in self._listing_problems
                    if p.file not in changed and p.file not in removed]
            self._listing_problems = kept + [Problem(f, r, unreadable=True)
                                              for f, r in sorted(reasons.items())]
        return taken

    @property
    def file_count(self) -> int:
        return len(self._paths)

    def _rebuild(self, changed: frozenset[str], removed: frozenset[str],
                 sorted_paths: list[str] | None = None) -> DumpChange:
        """Claim the listing again. `sorted_paths`: the listing already sorted (the scan's),
        so as not to sort the set again: 0.1 s for 180,000 names, in one call that holds the
        interpreter lock, during which the app answers no key."""
        dump = Dump(root=self.root, problems=list(self._listing_problems))
        claim_paths(dump, sorted(self._paths) if sorted_paths is None else sorted_paths,
                    expand=self.expand)
        signatures = {m.key: module_signature(m) for m in dump.modules}
        self.writing = self._listed_unsettled()  # the scan may list files a batch held back
        old = self._signatures
        change = DumpChange(
            dump=dump,
            added=[k for k in signatures if k not in old],
            removed=[k for k in old if k not in signatures],
            changed=[k for k, s in signatures.items() if k in old and old[k] != s],
            files_changed=changed,
            files_removed=removed,
            writing=self.writing,
        )
        self._signatures = signatures
        self.dump = dump
        return change


def watch_index(
    live: LiveIndex, on_change: Callable[[DumpChange], object], watcher: FolderWatcher | None = None
) -> FolderWatcher:
    """Start watching `live`'s folder; each batch is applied and reported with `on_change`."""
    watcher = watcher or WatchdogWatcher(live.root, only=live.single_file)

    def on_batch(batch: ChangeBatch) -> None:
        change = live.apply(batch)
        if change is not None:
            on_change(change)

    watcher.start(on_batch)
    return watcher


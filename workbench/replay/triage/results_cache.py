"""Triage results kept between runs, so no verdict is computed twice.

An entry is keyed by everything a verdict depends on: the bytes of the module's step files and
of the execution's snapshot, the module's timeline, the triage options (tolerances, inputs,
backend, linear, localize), the limits it ran under (memory, read size, links followed) and
the workbench's version and source code. A dump that grew, or whose files changed, misses
only for what is new or changed. The cache lives outside the dump folder (the user's cache
directory), is written atomically (a temporary file renamed into place, so concurrent writers
never show a half-written entry), and every entry is validated on read: a damaged, truncated
or foreign entry is ignored and recomputed, never trusted.

Entries are data, never code: JSON (`result_codec`), signed with HMAC-SHA256 under a secret
only this user can read (`secret`, made on first use in the user's own cache folder, mode
0600). An entry someone else wrote, or copied from another user's cache, does not verify and
is recomputed: a planted entry can neither run code nor turn a mismatch into ok. A cache
folder that another user could write to is refused outright (`unsafe_folder`), as ssh refuses
keys in such a folder.

Content hashes are remembered per dump with each file's size, modification and change times,
so a warm rerun reads the files' metadata, not their bytes (as git's index does).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import workbench
from workbench.replay.judge.outcome import Kind
from workbench.replay.triage.job import TriageResult
from workbench.replay.triage.result_codec import from_data, to_data
from workbench.sources import open_file

if TYPE_CHECKING:
    from workbench.replay.bisect import Verdict
    from workbench.replay.triage.job import TriageJob, TriageOptions

ENTRY_MAGIC = b"workbench triage result v2\n"
PACK_MAGIC = b"workbench triage pack v2\n"
SECRET_FILE = "secret"


class UnsafeCache(Exception):
    """The cache folder is one another user could write to: its entries cannot be trusted."""


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/workbench`, else `~/.cache/workbench`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "workbench"


def unsafe_folder(folder: Path) -> str | None:
    """Why another user could write into `folder`, or None.

    The folder (or, while it does not exist, the folder it would be made in) and every folder
    above it must belong to this user or to root and be writable by no one else, unless it is
    sticky (as /tmp is: others cannot replace what is ours there). The same rule ssh applies
    to the folders holding its keys.
    """
    user = os.geteuid()
    path = Path(os.path.abspath(folder))
    for place in (path, *path.parents):
        try:
            info = place.stat()
        except FileNotFoundError:
            continue
        except OSError as error:
            return f"{place}: {error.strerror}"
        if not stat.S_ISDIR(info.st_mode):
            return f"{place} is not a folder"
        if info.st_uid not in (user, 0):
            return f"{place} belongs to another user (uid {info.st_uid})"
        sticky = place != path and info.st_mode & stat.S_ISVTX
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky:
            return f"{place} can be written by other users (mode {info.st_mode & 0o777:o})"
    return None


def user_secret() -> bytes:
    """The key entries are signed with: in the user's own cache folder, readable by the user
    alone, made on first use."""
    folder = default_cache_dir()
    path = folder / SECRET_FILE
    with contextlib.suppress(OSError):
        info = path.lstat()
        if (stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
                and not info.st_mode & 0o077 and info.st_size == 32):
            return path.read_bytes()
    secret = secrets.token_bytes(32)
    _atomic_write(path, secret)  # mkstemp makes the file 0600
    return secret


@functools.cache
def code_digest() -> str:
    """The sha256 of the workbench's own source: a verdict computed by other code (a change
    within one version number) is not reused."""
    package = Path(workbench.__file__).parent
    hasher = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        hasher.update(os.fsencode(path.relative_to(package)) + b"\0")
        hasher.update(path.read_bytes())
    return hasher.hexdigest()


def _limits() -> tuple:
    """The limits a verdict was computed under (an error one caused may not recur without)."""
    from workbench.replay.processes.memory import memory_limit
    from workbench.sources import follow_links, read_limit

    return (memory_limit(), read_limit(), follow_links())


def job_files(job: TriageJob) -> list[str]:
    """The files (relative to the dump root) a job's replay reads."""
    files = {source.file for step in job.module.steps
             for source in (step.text, step.proto) if source is not None}
    if job.execution is not None:
        files.add(job.execution.file)
    return sorted(files)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _sha256_of(path: str) -> str:
    hasher = hashlib.sha256()
    with open_file(path) as stream:  # a FIFO named like a step is refused, never waited on
        while chunk := stream.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest()


@dataclass
class FileHashes:
    """Content hashes of a dump's files, remembered with their size and times."""

    root: Path
    memo_path: Path | None = None
    known: dict[str, list] = field(default_factory=dict)
    changed: bool = False
    _this_run: dict[str, str] = field(default_factory=dict)  # each file looked at once a run

    def load(self) -> None:
        if self.memo_path is None:
            return
        try:
            known = json.loads(self.memo_path.read_text())
        except (OSError, ValueError):
            return
        if isinstance(known, dict):
            self.known = {name: entry for name, entry in known.items()
                          if isinstance(entry, list) and len(entry) == 4}

    def save(self) -> None:
        if self.memo_path is None or not self.changed:
            return
        with contextlib.suppress(OSError):
            _atomic_write(self.memo_path, json.dumps(self.known).encode())
        self.changed = False

    def digest(self, name: str) -> str:
        """The file's sha256, or a marker that it cannot be read (that is part of a key too)."""
        digest = self._this_run.get(name)
        if digest is None:
            digest = self._this_run[name] = self._digest(name)
        return digest

    def _digest(self, name: str) -> str:
        path = f"{self.root}{os.sep}{name}"
        try:
            stat = os.stat(path)
        except OSError as error:
            return f"unreadable: {error.strerror}"
        identity = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]
        entry = self.known.get(name)
        if entry is not None and entry[:3] == identity:
            return str(entry[3])
        try:
            digest = _sha256_of(path)
        except OSError as error:
            return f"unreadable: {error.strerror}"
        self.known[name] = [*identity, digest]
        self.changed = True
        return digest


@functools.cache
def _schema() -> list[list[str]]:
    """The field names of what an entry holds: an entry of another shape is not read back."""
    from dataclasses import fields

    from workbench.model import Step
    from workbench.replay.bisect import Verdict
    from workbench.replay.judge.compare import Comparison
    from workbench.replay.judge.culprit import Culprit, CulpritInstruction
    from workbench.replay.judge.outcome import Outcome
    from workbench.replay.steps import StepResult

    kinds = (TriageResult, Verdict, StepResult, Step, Comparison, Outcome, Culprit,
             CulpritInstruction)
    return [[kind.__name__, *(f.name for f in fields(kind))] for kind in kinds]


def _sign(secret: bytes, *parts: bytes) -> bytes:
    return hmac.new(secret, b"".join(parts), hashlib.sha256).hexdigest().encode()


def _trusted_secret() -> bytes:
    """The user's signing key; where it cannot be kept (a read-only home), one for this run
    only: what this run writes then goes unused later, which costs time, never trust."""
    try:
        return user_secret()
    except OSError:
        return secrets.token_bytes(32)


@dataclass
class ResultsCache:
    """Triage results on disk under `folder`, one file per entry.

    Each dump also gets a pack: one file holding the entries its last triage used, so a warm
    rerun reads one file instead of one per job. The pack only saves reads: each entry in it
    is checked like one read from its own file, and a missing or damaged pack costs nothing
    but the reads it would have saved. Raises UnsafeCache for a folder others could write.
    """

    folder: Path
    secret: bytes = field(default_factory=_trusted_secret, repr=False)
    _modules: dict[int, tuple[object, str]] = field(default_factory=dict)  # id -> (module, part)
    _pack: dict[str, bytes] = field(default_factory=dict)  # the dump's pack, as read
    _used: dict[str, bytes] = field(default_factory=dict)  # entries this run read or wrote

    def __post_init__(self) -> None:
        reason = unsafe_folder(self.folder)
        if reason is not None:
            raise UnsafeCache(f"the results cache {self.folder} is not safe to use: {reason}; "
                              "use a folder only you can write (--cache DIR) or --no-cache")

    def _dump_name(self, root: Path) -> str:
        return hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:32]

    def hashes(self, root: Path) -> FileHashes:
        """The remembered content hashes of the dump at `root` (save them after use)."""
        hashes = FileHashes(Path(root), self.folder / "files" / f"{self._dump_name(root)}.json")
        hashes.load()
        return hashes

    def load_pack(self, root: Path) -> None:
        """Read the pack of the dump at `root` (see the class); a bad pack is ignored."""
        self._pack, self._used = {}, {}
        try:
            with open(self.folder / "packs" / f"{self._dump_name(root)}.pack", "rb") as stream:
                data = stream.read()
        except OSError:
            return
        if not data.startswith(PACK_MAGIC) or len(data) < len(PACK_MAGIC) + 65:
            return
        start = len(PACK_MAGIC)
        digest, payload = data[start:start + 64], data[start + 65:]
        if not hmac.compare_digest(_sign(self.secret, PACK_MAGIC, payload), digest):
            return
        with contextlib.suppress(ValueError, RecursionError):
            pack = json.loads(payload)
            if isinstance(pack, dict):
                self._pack = {key: entry.encode() for key, entry in pack.items()
                              if isinstance(key, str) and isinstance(entry, str)}

    def save_pack(self, root: Path) -> None:
        """Write the entries this run used as the dump's pack, unless it holds just those."""
        if self._used == self._pack:
            return
        payload = json.dumps({key: entry.decode() for key, entry in self._used.items()},
                             separators=(",", ":")).encode()
        data = PACK_MAGIC + _sign(self.secret, PACK_MAGIC, payload) + b"\n" + payload
        with contextlib.suppress(OSError):
            _atomic_write(self.folder / "packs" / f"{self._dump_name(root)}.pack", data)
        self._pack = self._used

    def _module_part(self, job: TriageJob, options: TriageOptions, hashes: FileHashes) -> str:
        """What every job of a module shares in its key (worked out once a run)."""
        module = job.module
        known = self._modules.get(id(module))
        if known is not None and known[0] is module:
            return known[1]
        npy = [(str(path), FileHashes(Path(path).parent).digest(Path(path).name))
               for path in options.inputs.npy]
        steps = sorted({s.file for step in module.steps for s in (step.text, step.proto) if s})
        described = (workbench.__version__, code_digest(), _schema(), repr(options), _limits(),
                     npy,
                     (module.key, module.name, module.format), [repr(s) for s in module.steps],
                     [(name, hashes.digest(name)) for name in steps])
        part = hashlib.sha256(repr(described).encode()).hexdigest()
        self._modules[id(module)] = (module, part)
        return part

    def key(self, job: TriageJob, options: TriageOptions, hashes: FileHashes) -> str:
        execution = job.execution
        described = (self._module_part(job, options, hashes),
                     None if execution is None else
                     (execution.id, execution.file, execution.kind, hashes.digest(execution.file)))
        return hashlib.sha256(repr(described).encode()).hexdigest()

    def _path(self, key: str) -> str:
        return f"{self.folder}{os.sep}results{os.sep}{key[:2]}{os.sep}{key}.result"

    def get(self, key: str, job: TriageJob) -> TriageResult | None:
        """The stored result for `key`, or None when there is none or it does not hold up."""
        packed = self._pack.get(key)
        if packed is not None:
            result = self._decode(key, packed, job)
            if result is not None:
                return result
        try:
            with open(self._path(key), "rb") as stream:
                data = stream.read()
        except OSError:
            return None
        return self._decode(key, data, job)

    def _decode(self, key: str, data: bytes, job: TriageJob) -> TriageResult | None:
        header = ENTRY_MAGIC + key.encode() + b"\n"
        if not data.startswith(header) or len(data) < len(header) + 65:
            return None
        digest, payload = data[len(header):len(header) + 64], data[len(header) + 65:]
        if not hmac.compare_digest(_sign(self.secret, header, payload), digest):
            return None  # written by someone else, or damaged
        try:
            entry = json.loads(payload)
            fields = from_data(entry["fields"])
            fields["status"] = Kind(fields["status"])
            result = CachedResult(entry["verdict"], **fields)
        except (ValueError, KeyError, TypeError, RecursionError):  # not what this version writes
            return None
        execution = job.execution.id if job.execution is not None else None
        if result.module != job.module.key or result.execution != execution:
            return None
        self._used[key] = data
        return result

    def put(self, key: str, result: TriageResult) -> None:
        """Keep `result`: a job's own result only, never a time limit, a dead worker or a
        backend bug (the caller's to decide), which another run may well get past."""
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
                  if f.name not in ("verdict", "cached")}
        fields["status"] = str(result.status)
        try:
            payload = json.dumps({"fields": to_data(fields), "verdict": to_data(result.verdict)},
                                 separators=(",", ":")).encode()
        except TypeError:  # a value that is not plain data: not kept, computed again next time
            return
        header = ENTRY_MAGIC + key.encode() + b"\n"
        data = header + _sign(self.secret, header, payload) + b"\n" + payload
        with contextlib.suppress(OSError):  # a full or read-only cache only costs time
            _atomic_write(Path(self._path(key)), data)
        self._used[key] = data


class CachedResult(TriageResult):
    """A result read from the cache. Its verdict, the bulk of an entry, is built from its data
    when first asked for (JSON output, the TUI's badges): a rerun that prints statuses never
    pays for it. The entry's signature was checked before."""

    def __init__(self, verdict_data: object, **fields: Any) -> None:
        self._verdict_data = verdict_data
        self._loaded: Verdict | None = None
        super().__init__(**fields, cached=True)

    @property
    def verdict(self) -> Verdict | None:
        if self._loaded is None and self._verdict_data is not None:
            data, self._verdict_data = self._verdict_data, None
            self._loaded = from_data(data)
        return self._loaded

    @verdict.setter
    def verdict(self, value: Verdict | None) -> None:
        if value is not None:
            self._loaded, self._verdict_data = value, None

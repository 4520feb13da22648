"""Triage results kept between runs, so no verdict is computed twice.

An entry is keyed by everything a verdict depends on: the bytes of the module's step files and
of the execution's snapshot (and of `--inputs` files), the module's timeline, the triage
options (tolerances, inputs, backend, `--linear`, `--localize`), the limits in force (memory,
read, links), the workbench's version and code, and the entry format. A dump that grew, or
whose files changed, misses only for what is new or changed. A time limit is not in the key:
a job that hit it is never stored, and a job that finished under one finishes under any.

The cache holds data, never code: each entry is two lines of JSON (a header naming the format,
its version, the key and a MAC; then the result), read with `json.loads` and checked field by
field (`results_codec`). Keys and MACs are HMAC-SHA256 under a secret made on first use and
kept in the cache folder (`mac-key`, readable by the user alone), so an entry can be written
only by someone who can read that file: the folder's owner. The folder itself is refused when
another user could write it (`cache_folder`). The cache lives outside the dump folder, is
written atomically (a temporary file renamed into place, so concurrent writers never show a
half-written entry), and an entry that does not check out is ignored, noted and recomputed.

Content hashes are remembered per dump with each file's size, modification and change times,
so a warm rerun reads the files' metadata, not their bytes (as git's index does).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import workbench
from workbench.output.destinations import OutputError, write_file_atomically
from workbench.replay.cache_folder import UnsafeCacheFolder, check_private_folder
from workbench.replay.triage_job import TriageResult

if TYPE_CHECKING:
    from workbench.replay.triage_job import TriageJob, TriageOptions

FORMAT_VERSION = 2
ENTRY_FORMAT = "workbench triage result"
PACK_FORMAT = "workbench triage pack"
HASHES_FORMAT = "workbench file hashes"
MAC_KEY_FILE = "mac-key"

__all__ = ["ResultsCache", "UnsafeCacheFolder", "default_cache_dir", "job_files"]


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/workbench`, else `~/.cache/workbench`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "workbench"


def job_files(job: TriageJob) -> list[str]:
    """The files (relative to the dump root) a job's replay reads."""
    files = {source.file for step in job.module.steps
             for source in (step.text, step.proto) if source is not None}
    if job.execution is not None:
        files.add(job.execution.file)
    return sorted(files)


def _store(path: Path, data: bytes) -> None:
    """Write a cache file; a full or read-only cache only costs time."""
    with contextlib.suppress(OutputError):
        write_file_atomically(path, data)


def _sha256_of(path: str) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest()


def _mac_key(folder: Path) -> bytes:
    """The cache's secret: read, or made (0600) when the folder has none. Raises
    `UnsafeCacheFolder` when it is not the user's alone."""
    path = folder / MAC_KEY_FILE
    if not os.path.lexists(path):  # published whole (a link to a full file), or not at all
        try:
            handle, temporary = tempfile.mkstemp(prefix=".mac-key.", dir=folder)
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(os.urandom(32).hex().encode())
                with contextlib.suppress(FileExistsError):  # another run made it first
                    os.link(temporary, path)
            finally:
                os.unlink(temporary)
        except OSError as error:
            raise UnsafeCacheFolder(f"the results cache folder {folder} is not used: its key "
                                    f"{path} cannot be made: {error.strerror}") from None
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as stream:
            info = os.fstat(stream.fileno())
            secret = stream.read(65)
    except OSError as error:
        raise UnsafeCacheFolder(f"the results cache folder {folder} is not used: its key "
                                f"{path} cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise UnsafeCacheFolder(
            f"the results cache folder {folder} is not used: its key {path} must be a file "
            f"of yours that only you can read (chmod 600 {path})")
    if len(secret) != 64:  # being written by another run this instant, or damaged
        raise UnsafeCacheFolder(f"the results cache folder {folder} is not used: its key "
                                f"{path} is damaged (delete it to start a new cache)")
    return secret


@functools.cache
def code_identity() -> str:
    """The workbench's version and its source files' names, sizes and times: results made by
    other code (an upgrade, an edited checkout) are not reused."""
    package = Path(workbench.__file__).parent
    described = [workbench.__version__]
    for path in sorted(package.rglob("*.py")):
        with contextlib.suppress(OSError):
            info = path.stat()
            described.append(f"{path.relative_to(package)} {info.st_size} {info.st_mtime_ns}")
    return hashlib.sha256("\n".join(described).encode()).hexdigest()


def limits_in_force() -> tuple[object, ...]:
    """The limits that change what a job returns (an error under a low limit), as they are
    set for this process and the workers it starts."""
    from workbench.replay.memory import memory_limit
    from workbench.sources import follow_links, read_limit

    return ("memory", memory_limit(), "read", read_limit(), "follow links", follow_links())


@dataclass
class FileHashes:
    """Content hashes of a dump's files, remembered with their size and times."""

    root: Path
    memo_path: Path | None = None
    secret: bytes = b""
    known: dict[str, list] = field(default_factory=dict)
    changed: bool = False
    _this_run: dict[str, str] = field(default_factory=dict)  # each file looked at once a run

    def load(self) -> None:
        if self.memo_path is None:
            return
        try:
            data = self.memo_path.read_bytes()
        except OSError:
            return
        payload = _open_sealed(data, HASHES_FORMAT, str(self.root), self.secret)
        if not isinstance(payload, dict):
            return
        self.known = {name: entry for name, entry in payload.items()
                      if isinstance(entry, list) and len(entry) == 4
                      and all(type(n) is int for n in entry[:3]) and isinstance(entry[3], str)}

    def save(self) -> None:
        if self.memo_path is None or not self.changed:
            return
        _store(self.memo_path, _seal(HASHES_FORMAT, str(self.root), self.known, self.secret))
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
            info = os.stat(path)
        except OSError as error:
            return f"unreadable: {error.strerror}"
        identity = [info.st_size, info.st_mtime_ns, info.st_ctime_ns]
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


def _mac(secret: bytes, key: str, payload: bytes) -> str:
    return hmac.new(secret, key.encode() + b"\n" + payload, hashlib.sha256).hexdigest()


def _seal(kind: str, key: str, payload: Any, secret: bytes) -> bytes:
    """Two lines of JSON: the header (format, version, key, MAC of the rest), the payload."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    header = {"format": kind, "version": FORMAT_VERSION, "key": key,
              "mac": _mac(secret, key, body)}
    return json.dumps(header).encode() + b"\n" + body + b"\n"


class _Rejected(Exception):
    """An entry that does not check out, and why (said to the user, then recomputed)."""


def _open_sealed(data: bytes, kind: str, key: str, secret: bytes) -> Any:
    """The payload of what `_seal` wrote, or None when it is not that (no reason needed)."""
    try:
        return _check_sealed(data, kind, key, secret)
    except _Rejected:
        return None


def _check_sealed(data: bytes, kind: str, key: str, secret: bytes) -> Any:
    head, _, rest = data.partition(b"\n")
    body, newline, tail = rest.partition(b"\n")
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):
        raise _Rejected("not a cache entry of this version (unreadable header)") from None
    if not isinstance(header, dict) or header.get("format") != kind \
            or header.get("version") != FORMAT_VERSION:
        raise _Rejected("not a cache entry of this version")
    if header.get("key") != key:
        raise _Rejected("it belongs to another key")
    mac = header.get("mac")
    if not newline or tail or not isinstance(mac, str) \
            or not hmac.compare_digest(mac, _mac(secret, key, body)):
        raise _Rejected("its MAC does not match: damaged, or not written by this cache")
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise _Rejected("its contents are not JSON") from None


@functools.cache
def _schema() -> list[list[str]]:
    """The field names of what an entry holds: an entry of another shape is not read back."""
    from dataclasses import fields

    from workbench.model import Step
    from workbench.replay.bisect import Verdict
    from workbench.replay.compare import BoundCheck, Comparison
    from workbench.replay.outcome import Outcome
    from workbench.replay.steps import StepResult

    kinds = (TriageResult, Verdict, StepResult, Step, Comparison, BoundCheck, Outcome)
    return [[kind.__name__, *(f.name for f in fields(kind))] for kind in kinds]


@dataclass
class ResultsCache:
    """Triage results on disk under `folder`, one file per entry.

    Making one checks the folder (`UnsafeCacheFolder` when another user could write it) and
    reads its secret. Each dump also gets a pack: one file holding the entries its last
    triage used, so a warm rerun reads one file instead of one per job. The pack only saves
    reads: each entry in it is checked like one read from its own file, and a missing or
    damaged pack costs nothing but the reads it would have saved. `notes` says, for people,
    which entries were ignored and why.
    """

    folder: Path
    notes: list[str] = field(default_factory=list)
    _secret: bytes = b""
    _modules: dict[int, tuple[object, str]] = field(default_factory=dict)  # id -> (module, part)
    _pack: dict[str, bytes] = field(default_factory=dict)  # the dump's pack, as read
    _used: dict[str, bytes] = field(default_factory=dict)  # entries this run read or wrote

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)
        check_private_folder(self.folder)
        self._secret = _mac_key(self.folder)

    def _name(self, described: object) -> str:
        return hmac.new(self._secret, repr(described).encode(), hashlib.sha256).hexdigest()

    def _dump_name(self, root: Path) -> str:
        return self._name(("dump", os.fsdecode(Path(root).resolve())))[:32]

    def hashes(self, root: Path) -> FileHashes:
        """The remembered content hashes of the dump at `root` (save them after use)."""
        hashes = FileHashes(Path(root), self.folder / "files" / f"{self._dump_name(root)}.json",
                            self._secret)
        hashes.load()
        return hashes

    def _pack_path(self, root: Path) -> Path:
        return self.folder / "packs" / f"{self._dump_name(root)}.jsonl"

    def load_pack(self, root: Path) -> None:
        """Read the pack of the dump at `root` (see the class); a bad pack is ignored."""
        self._pack, self._used = {}, {}
        try:
            data = self._pack_path(root).read_bytes()
        except OSError:
            return
        head, _, rest = data.partition(b"\n")
        with contextlib.suppress(ValueError, RecursionError):
            if json.loads(head) != {"format": PACK_FORMAT, "version": FORMAT_VERSION}:
                return
        lines = rest.split(b"\n")
        for entry_head, body in zip(lines[0::2], lines[1::2], strict=False):
            try:
                key = json.loads(entry_head)["key"]
            except (ValueError, TypeError, KeyError, RecursionError):
                continue
            if isinstance(key, str):  # checked when it is used, like a file's entry
                self._pack[key] = entry_head + b"\n" + body + b"\n"

    def save_pack(self, root: Path) -> None:
        """Write the entries this run used as the dump's pack, unless it holds just those."""
        if self._used == self._pack:
            return
        header = json.dumps({"format": PACK_FORMAT, "version": FORMAT_VERSION}).encode()
        _store(self._pack_path(root), header + b"\n" + b"".join(self._used.values()))
        self._pack = dict(self._used)

    def _module_part(self, job: TriageJob, options: TriageOptions, hashes: FileHashes) -> str:
        """What every job of a module shares in its key (worked out once a run)."""
        module = job.module
        known = self._modules.get(id(module))
        if known is not None and known[0] is module:
            return known[1]
        npy = [(str(path), FileHashes(Path(path).parent).digest(Path(path).name))
               for path in options.inputs.npy]
        steps = sorted({s.file for step in module.steps for s in (step.text, step.proto) if s})
        described = (FORMAT_VERSION, code_identity(), _schema(), repr(options), npy,
                     limits_in_force(), (module.key, module.name, module.format),
                     [repr(s) for s in module.steps],
                     [(name, hashes.digest(name)) for name in steps])
        part = hashlib.sha256(repr(described).encode()).hexdigest()
        self._modules[id(module)] = (module, part)
        return part

    def key(self, job: TriageJob, options: TriageOptions, hashes: FileHashes) -> str:
        execution = job.execution
        return self._name((self._module_part(job, options, hashes),
                           None if execution is None else
                           (execution.id, execution.file, execution.kind,
                            hashes.digest(execution.file))))

    def _path(self, key: str) -> str:
        return f"{self.folder}{os.sep}results{os.sep}{key[:2]}{os.sep}{key}.jsonl"

    def get(self, key: str, job: TriageJob) -> TriageResult | None:
        """The stored result for `key`, or None when there is none or it does not hold up
        (then `notes` says why)."""
        packed = self._pack.get(key)
        if packed is not None:
            with contextlib.suppress(_Rejected):
                return self._decode(key, packed, job)
        try:
            with open(self._path(key), "rb") as stream:
                data = stream.read()
        except OSError:
            return None
        try:
            return self._decode(key, data, job)
        except _Rejected as why:
            execution = job.execution.id if job.execution is not None else "fake data"
            self.notes.append(f"the results cache entry of {job.module.key} ({execution}) "
                              f"is ignored and evaluated again: {why}")
            return None

    def _decode(self, key: str, data: bytes, job: TriageJob) -> TriageResult:
        from workbench.replay.results_codec import BadEntry, decode_result

        payload = _check_sealed(data, ENTRY_FORMAT, key, self._secret)
        try:
            result = decode_result(payload, job.module)
        except BadEntry as error:
            raise _Rejected(f"it is not a result this version writes ({error})") from None
        execution = job.execution.id if job.execution is not None else None
        if (result.module, result.name, result.execution) != \
                (job.module.key, job.module.name, execution):
            raise _Rejected("it is the result of another job")
        self._used[key] = data
        return result

    def put(self, key: str, result: TriageResult) -> None:
        """Keep `result`: a job's own result only, never a time limit, a dead worker or a
        backend bug (the caller's to decide), which another run may well get past."""
        from workbench.replay.results_codec import encode_result

        try:
            data = _seal(ENTRY_FORMAT, key, encode_result(result), self._secret)
        except (TypeError, ValueError):  # something this format cannot hold: not kept
            return
        _store(Path(self._path(key)), data)
        self._used[key] = data

"""IREE HAL replay captures (`.ireereplay`), read through `iree-dump-replay --format=jsonl`.

The capture is binary; IREE's own dumper validates it and prints one JSON object a line: a
`file` row (container header), a `summary` row (hermetic, strict replay supported, counts),
then one row a record in capture order, each with `kind` (session, object, operation, blob,
unsupported), `sequence_ordinal`, `object_type`/`object_id`, `operation`, `status` and a
decoded `payload` whose blob bytes are given as `*_range` byte ranges of the capture file.
Scopes are not a field: `replay.scope_begin`/`replay.scope_end` operations (payload `name`)
bracket the records of a phase (`iree-run-module` writes `init`, `execute`, `deinit`); they
may nest, so each record here carries the names of the scopes open around it.

An executable's id (what `iree-run-replay --replay_executable_substitution=ID=PATH` takes) is
the `related_object_id` of its `executable_cache.prepare_executable` operation; that row's
`format_range` points at the executable format string (`embedded-elf-x86_64`) in the capture.
Facts from IREE's `runtime/src/iree/hal/replay/dump.c` and `docs/.../device-replay.md`.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

from workbench.external_tools import DUMP_TOOL, ToolProcess, find_tool
from workbench.model import Artifact, Dump, Execution, Module
from workbench.sources import ReadError

# Summary fields that count the capture's HAL file objects and their bytes.
FILE_FIELDS = (
    "file_object_count", "external_file_count", "inline_file_count", "range_file_count",
    "unknown_file_reference_count", "external_file_total_length", "inline_file_total_length",
    "range_file_total_length", "captured_read_total_length",
)
REPLAY_SUFFIX = ".ireereplay"
MODULE_SUFFIX = ".vmfb"
_MAX_FORMAT_LENGTH = 256  # an executable format is a short name; anything longer is not one


@dataclass
class ReplayRecord:
    """One record of the capture: the dumper's row plus the scopes open around it."""

    ordinal: int
    kind: str
    operation: str  # "none" for records that are not operations
    object_type: str
    object_id: int
    related_object_id: int
    status: str
    payload_type: str
    payload: dict[str, Any] | None
    scopes: tuple[str, ...]  # enclosing replay scopes, outermost first
    row: dict[str, Any]  # the dumper's JSON row, unchanged

    def matches(self, kind: str | None = None, operation: str | None = None,
                scope: str | None = None) -> bool:
        """Filter test. `operation` matches a name (`device.queue_execute`) or a family
        (`command_buffer` matches every `command_buffer.*`); `scope` matches any open scope."""
        if kind is not None and self.kind != kind:
            return False
        if operation is not None and not (
            self.operation == operation or self.operation.startswith(operation + ".")
        ):
            return False
        return scope is None or scope in self.scopes

    def details(self, limit: int = 100) -> str:
        """The payload's scalar and short list fields as `key=value`, for a one-line listing
        (byte ranges and nested tables are left to the JSON)."""
        parts = []
        for key, value in (self.payload or {}).items():
            if key.endswith("_range") or isinstance(value, dict):
                continue
            if isinstance(value, list):
                if len(value) > 4 or any(isinstance(item, (dict, list)) for item in value):
                    parts.append(f"{key}=[{len(value)}]")
                    continue
                value = "[" + ",".join(str(item) for item in value) + "]"
            parts.append(f"{key}={value}")
        text = " ".join(parts)
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ReplayExecutable:
    """An executable of the capture: the id to substitute it by, and what it is."""

    id: int
    format: str | None  # None when the capture does not say or the bytes are not a name
    function_count: int | None
    data_length: int | None
    prepared_at: int | None  # ordinal of its prepare_executable record


@dataclass
class ReplaySummary:
    version: str
    file_length: int
    hermetic: bool
    environment_referenced: bool
    strict_replay_supported: bool
    record_count: int
    object_count: int
    operation_count: int
    unsupported_count: int
    scope_begin_count: int
    scope_end_count: int
    files: dict[str, int]  # FILE_FIELDS present in the dumper's summary
    file_validation: dict[str, int]
    scopes: list[str] = field(default_factory=list)  # scope names, in the order they begin


@dataclass
class ReplayDump:
    file: str
    summary: ReplaySummary
    records: list[ReplayRecord]
    executables: list[ReplayExecutable]

    def select(self, kind: str | None = None, operation: str | None = None,
               scope: str | None = None) -> list[ReplayRecord]:
        return [r for r in self.records if r.matches(kind, operation, scope)]


def read_replay(path: Path, *, timeout_s: float = 60.0) -> ReplayDump:
    """Dump `path` with `iree-dump-replay` and parse it.

    Raises `ToolMissing` when the tool is not installed, and `ReadError` carrying the tool's
    message verbatim when it rejects the capture (`DATA_LOSS; replay file length extends
    past file contents`).
    """
    # Absolute: IREE's flag parser takes no `--`, and a file named `--flagfile=...` is a file.
    process = ToolProcess([find_tool(DUMP_TOOL), "--format=jsonl", str(path.absolute())],
                          timeout_s=timeout_s)
    rows = [line.text for line in process.lines() if line.stream == "stdout"]
    result = process.wait()
    if not result.ok:
        raise ReadError(str(path), f"{DUMP_TOOL} {result.describe()}")
    dump = parse_replay_jsonl(rows, str(path))
    dump.executables = _with_formats(dump.executables, dump.records, path)
    return dump


def parse_replay_jsonl(lines: list[str], file: str) -> ReplayDump:
    """Parse the dumper's JSONL (a pure function of its text); bad rows raise `ReadError`."""
    header: dict[str, Any] | None = None
    summary_row: dict[str, Any] | None = None
    header_line = summary_line = 0
    records: list[ReplayRecord] = []
    open_scopes: list[str] = []
    scope_names: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = _row(line, number, file)
        kind = row.get("kind")
        if kind == "file":
            header, header_line = row, number
        elif kind == "summary":
            summary_row, summary_line = row, number
        elif isinstance(kind, str):
            record = _record(row, kind, number, file, open_scopes)
            if record.operation == "replay.scope_begin" and (name := _scope_name(record)):
                scope_names.append(name)
            records.append(record)
        else:
            raise ReadError(file, f"{DUMP_TOOL} output line {number} has no `kind`")
    if header is None or summary_row is None:
        missing = "file header" if header is None else "summary"
        raise ReadError(file, f"{DUMP_TOOL} output has no {missing} row")
    summary = _summary(header, header_line, summary_row, summary_line, file)
    summary.scopes = scope_names
    return ReplayDump(file, summary, records, _executables(records))


def _row(line: str, number: int, file: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise ReadError(file, f"{DUMP_TOOL} output line {number} is not JSON: {error.msg}")\
            from None
    if not isinstance(row, dict):
        raise ReadError(file, f"{DUMP_TOOL} output line {number} is not a JSON object")
    return row


def _field(row: dict[str, Any], key: str, kind: type, number: int, file: str) -> Any:
    value = row.get(key)
    # bool is an int subclass: a count or id that is true/false is not one.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReadError(file, f"{DUMP_TOOL} output line {number}: `{key}` is missing or "
                              f"not {kind.__name__}")
    return value


def _record(row: dict[str, Any], kind: str, number: int, file: str,
            open_scopes: list[str]) -> ReplayRecord:
    payload = row.get("payload")
    record = ReplayRecord(
        ordinal=_field(row, "sequence_ordinal", int, number, file),
        kind=kind,
        operation=_field(row, "operation", str, number, file),
        object_type=_field(row, "object_type", str, number, file),
        object_id=_field(row, "object_id", int, number, file),
        related_object_id=_field(row, "related_object_id", int, number, file),
        status=_field(row, "status", str, number, file),
        payload_type=_field(row, "payload_type", str, number, file),
        payload=payload if isinstance(payload, dict) else None,
        scopes=(),
        row=row,
    )
    name = _scope_name(record)
    if record.operation == "replay.scope_begin" and name:
        open_scopes.append(name)
    record.scopes = tuple(open_scopes)
    if record.operation == "replay.scope_end" and name in open_scopes:
        # Close the innermost scope of that name (an end without a begin changes nothing).
        del open_scopes[len(open_scopes) - 1 - open_scopes[::-1].index(name)]
    return record


def _scope_name(record: ReplayRecord) -> str:
    name = (record.payload or {}).get("name") if record.payload_type == "replay_scope" else None
    return name if isinstance(name, str) else ""


def _summary(header: dict[str, Any], header_line: int, row: dict[str, Any], line: int,
             file: str) -> ReplaySummary:
    def count(key: str) -> int:
        return _field(row, key, int, line, file)

    def flag(key: str) -> bool:
        return _field(row, key, bool, line, file)

    validation = row.get("file_validation")
    return ReplaySummary(
        version=f"{header.get('version_major', '?')}.{header.get('version_minor', '?')}",
        file_length=_field(header, "file_length", int, header_line, file),
        hermetic=flag("hermetic"),
        environment_referenced=flag("environment_referenced"),
        strict_replay_supported=flag("strict_replay_supported"),
        record_count=count("record_count"),
        object_count=count("object_count"),
        operation_count=count("operation_count"),
        unsupported_count=count("unsupported_count"),
        scope_begin_count=count("scope_begin_count"),
        scope_end_count=count("scope_end_count"),
        files={key: row[key] for key in FILE_FIELDS if isinstance(row.get(key), int)},
        file_validation={k: v for k, v in (validation or {}).items() if isinstance(v, int)}
        if isinstance(validation, dict) else {},
    )


def _executables(records: list[ReplayRecord]) -> list[ReplayExecutable]:
    """Executables by id: from their prepare operations, and any object record without one."""
    found: dict[int, ReplayExecutable] = {}
    for record in records:
        if record.operation == "executable_cache.prepare_executable":
            payload = record.payload or {}
            found[record.related_object_id] = ReplayExecutable(
                id=record.related_object_id,
                format=None,
                function_count=_int_or_none(payload.get("metadata_function_count")),
                data_length=_int_or_none(payload.get("executable_data_length")),
                prepared_at=record.ordinal,
            )
    for record in records:
        if record.kind == "object" and record.object_type == "executable":
            found.setdefault(record.object_id,
                             ReplayExecutable(record.object_id, None, None, None, None))
    return [found[key] for key in sorted(found)]


def _with_formats(executables: list[ReplayExecutable], records: list[ReplayRecord],
                  path: Path) -> list[ReplayExecutable]:
    """Fill each executable's format from the bytes its prepare record's `format_range`
    points at in the capture (read-only; uncompressed short ranges only)."""
    ranges: dict[int, dict[str, Any]] = {}
    for record in records:
        if record.operation == "executable_cache.prepare_executable":
            format_range = (record.payload or {}).get("format_range")
            if isinstance(format_range, dict):
                ranges[record.related_object_id] = format_range
    if not ranges:
        return executables
    try:
        with open(path, "rb") as handle:
            return [replace(e, format=_range_text(handle, ranges.get(e.id))) for e in executables]
    except OSError:  # the dumper just read it; if it is gone now, formats stay unknown
        return executables


def _range_text(handle: BinaryIO, file_range: dict[str, Any] | None) -> str | None:
    if not file_range or file_range.get("compression_type") != 0:
        return None
    offset, length = file_range.get("offset"), file_range.get("length")
    if not isinstance(offset, int) or not isinstance(length, int):
        return None
    if not 0 < length <= _MAX_FORMAT_LENGTH:
        return None
    # A damaged capture's range may point anywhere, even past what a file offset can hold.
    if not 0 <= offset <= os.fstat(handle.fileno()).st_size - length:
        return None
    handle.seek(offset)
    data = handle.read(length)
    if len(data) != length or not data.isascii():
        return None
    text = data.decode()
    return text if text.isprintable() else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def claim_iree_replays(dump: Dump, paths: list[str]) -> list[str]:
    """Add a module of format "iree" per program that `.ireereplay` captures ran; names only.

    A capture belongs to the `.vmfb` beside it (same folder) with the same stem, else to the
    only `.vmfb` there; the module is named after that vmfb, which becomes its artifact. With
    no vmfb (or several, none with the capture's stem) the module is named after the capture.
    Returns the paths not claimed.
    """
    replays = [path for path in paths if path.endswith(REPLAY_SUFFIX)]
    if not replays:
        return paths
    vmfbs: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        if path.endswith(MODULE_SUFFIX):
            vmfbs[posixpath.dirname(path)].append(path)
    modules: dict[str, Module] = {}
    claimed = set(replays)
    for replay in replays:
        folder, basename = posixpath.split(replay)
        stem = basename[: -len(REPLAY_SUFFIX)]
        beside = vmfbs.get(folder, [])
        same_stem = posixpath.join(folder, stem + MODULE_SUFFIX)
        vmfb = same_stem if same_stem in beside else beside[0] if len(beside) == 1 else None
        owner = vmfb[: -len(MODULE_SUFFIX)] if vmfb else replay[: -len(REPLAY_SUFFIX)]
        module = modules.get(owner)
        if module is None:
            module = modules[owner] = Module(id=owner, name=posixpath.basename(owner),
                                             format="iree")
            if vmfb:
                module.artifacts.append(Artifact(kind="vmfb", file=vmfb))
                claimed.add(vmfb)
        module.executions.append(Execution(id=stem, file=replay, kind="ireereplay"))
    dump.modules.extend(modules.values())
    return [path for path in paths if path not in claimed]

"""Writing a recording folder: the calls' `.npy` files and `recording.json`, bounded.

A call is recorded whole or not at all: one whose arguments and results pass `max_bytes`, or
an executable's calls past `calls`, are left out and the manifest says so (`skipped`, once per
module and reason, with a count), so a replay never takes a partial recording for a whole one.
The manifest is rewritten (atomically) after every call, so a program that dies mid-run
leaves a readable recording of the calls made so far.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.formats.recording import FORMAT, MANIFEST, VERSION
from workbench.sizes import format_size

DEFAULT_MAX_BYTES = 1 << 30  # per call, arguments and results together
DEFAULT_CALLS = 1  # calls recorded per compiled executable
_DUMP_TO = re.compile(r"--xla_dump_to=(.+)")


def default_folder() -> Path:
    """`io/` in the dump folder `XLA_FLAGS` names (`--xla_dump_to=DIR`), where the workbench
    looks for a recording; raises ValueError when the flags name none."""
    for word in shlex.split(os.environ.get("XLA_FLAGS", "")):
        match = _DUMP_TO.fullmatch(word)
        if match is not None and match[1] not in ("-", "sponge"):
            return Path(match[1]) / "io"
    raise ValueError("XLA_FLAGS has no --xla_dump_to=DIR: give the recording folder (out=...)")


@dataclass(frozen=True)
class Executable:
    """What names a compiled executable's module in the dump."""

    module: str
    fingerprint: str | None
    layout: str | None


class RecordingWriter:
    """Appends calls to a recording folder (a recording already there is continued). One per
    folder in a process (`writer_for`): every recorded function of a program writes one
    manifest."""

    def __init__(self, folder: Path, producer: str) -> None:
        self.folder = Path(folder)
        self.manifest: dict[str, Any] = {"format": FORMAT, "version": VERSION,
                                         "producer": producer, "calls": [], "skipped": []}
        existing = self.folder / MANIFEST
        if existing.is_file():
            self.manifest = json.loads(existing.read_text())
        self._recorded: dict[Executable, int] = {}
        for call in self.manifest["calls"]:
            key = Executable(call["module"], call.get("fingerprint"), call.get("layout"))
            self._recorded[key] = self._recorded.get(key, 0) + 1

    def wants(self, executable: Executable, calls: int = DEFAULT_CALLS) -> bool:
        """Whether the next call of `executable` is to be recorded, when at most `calls` of
        each executable are (else it is noted)."""
        if self._recorded.get(executable, 0) < calls:
            return True
        self.skip(executable, f"calls past the first {calls} of each executable")
        return False

    def fits(self, executable: Executable, size: int, max_bytes: int = DEFAULT_MAX_BYTES
             ) -> bool:
        """Whether a call of `size` bytes (arguments and results) is within `max_bytes`."""
        if size <= max_bytes:
            return True
        self.skip(executable, f"calls over {format_size(max_bytes)} of arguments and "
                  f"results (max_bytes)")
        return False

    def skip(self, executable: Executable, reason: str) -> None:
        for entry in self.manifest["skipped"]:
            if entry["module"] == executable.module and entry["reason"] == reason:
                entry["count"] += 1
                break
        else:
            self.manifest["skipped"].append({"module": executable.module, "reason": reason,
                                             "count": 1})
        self._write_manifest()

    def write(self, executable: Executable, arguments: list[np.ndarray],
              results: list[np.ndarray]) -> str | None:
        """Record one call; its name (the files' NAME). A call without arguments is noted
        instead: a recording is found by its first argument, and a replay needs none."""
        if not arguments:
            self.skip(executable, "no arguments to record: replay it with --fake-data")
            return None
        number = self._recorded.get(executable, 0)
        taken = {call["name"] for call in self.manifest["calls"]}
        index = len(taken)
        while (name := f"{executable.module}.{index}") in taken:
            index += 1
        for sub, role, arrays in (("inputs", "arg", arguments), ("outputs", "out", results)):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
            for k, array in enumerate(arrays):
                np.save(self.folder / sub / f"{name}.{role}{k}.npy", array, allow_pickle=False)
        self.manifest["calls"].append({
            "name": name, "module": executable.module, "fingerprint": executable.fingerprint,
            "layout": executable.layout, "arguments": len(arguments), "results": len(results),
            "bytes": sum(a.nbytes for a in (*arguments, *results))})
        self._recorded[executable] = number + 1
        self._write_manifest()
        return name

    def _write_manifest(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".recording.")
        with os.fdopen(handle, "w") as stream:
            json.dump(self.manifest, stream, indent=1)
        os.replace(temporary, self.folder / MANIFEST)


_WRITERS: dict[Path, RecordingWriter] = {}


def writer_for(folder: Path, producer: str) -> RecordingWriter:
    """The process's one writer of `folder`."""
    key = folder.resolve()
    if key not in _WRITERS:
        _WRITERS[key] = RecordingWriter(folder, producer)
    return _WRITERS[key]

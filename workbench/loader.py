"""Parsed HLO modules and snapshots of a dump's steps and executions, read through the
one store of derived facts (`workbench.facts`), so each file is parsed once while it stays
the same.

Reading bytes and text (and `ReadError`) is `workbench.sources`; this module is above the
format readers and below everything that replays or shows what they read, and passes the
reading names on (`__all__`) for callers that both read and parse.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from workbench.facts import FACTS, PARSED, FactKind
from workbench.formats import hlo_proto, hlo_text, snapshot
from workbench.formats.snapshot import Snapshot
from workbench.hlo_ir import HloModule
from workbench.model import Execution, Source, Step
from workbench.sources import (
    ENTRY_READERS,
    ReadError,
    decode_text,
    open_file,
    read_bytes,
    read_text,
)

__all__ = ["ENTRY_READERS", "ReadError", "decode_text", "judged_file", "load_snapshot",
           "load_step_hlo", "open_file", "read_bytes", "read_hlo_file", "read_snapshot_file",
           "read_text"]

_Input = TypeVar("_Input")
_Output = TypeVar("_Output")

# A parsed module takes about 20 times its file's size in memory (measured on the 6,000-line
# module of the large transformer dump); a snapshot holds one too, beside its arrays.
HLO_MODULE: FactKind[HloModule] = FactKind("hlo-module", PARSED, per_byte=20)
SNAPSHOT: FactKind[Snapshot] = FactKind("snapshot", PARSED, per_byte=20)


def read_hlo_file(root: Path, source: Source, kind: str) -> HloModule:
    """Parse one HLO file, uncached: `kind` is "proto" (`.hlo.pb[.gz]`) or "text"."""
    if kind == "proto":
        data = read_bytes(root, source)
        if not data:
            raise ReadError(source.file, "empty file (still being written?)")
        return _translate(hlo_proto.read_hlo_proto, data, source.file)
    return _translate(hlo_text.parse_hlo_text, read_text(root, source), source.file)


def read_snapshot_file(root: Path, source: Source) -> Snapshot:
    """Parse one snapshot file, uncached; one larger than the memory limit allows to read
    (`snapshot.check_memory`) is refused before its bytes are read."""
    snapshot.check_size(root / source.file, source)
    data = read_bytes(root, source)
    if not data:
        raise ReadError(source.file, "empty file (still being written?)")
    return _translate(snapshot.read_snapshot, data, source.file)


def _translate(reader: Callable[[_Input, str], _Output], data: _Input, file: str) -> _Output:
    """Run a reader; any failure it did not already name becomes a ReadError for `file`."""
    try:
        return reader(data, file)
    except ReadError:
        raise
    except RecursionError:
        raise ReadError(file, "nested too deeply to read") from None
    except Exception as error:  # a reader bug or an input it did not foresee: still a problem
        raise ReadError(file, f"cannot read: {type(error).__name__}: {error}") from None


def load_step_hlo(root: Path, step: Step) -> HloModule:
    """The HLO module of a step: from its proto when it has one (full constants), else its
    text; from the text too when the proto cannot be read (a dump still being written), and
    only if both fail the proto's error is raised. Cached; the module returned is shared, so
    treat it as read-only."""
    if step.ir != "hlo":
        raise ReadError(step.file or step.label, f"step {step.label} holds MLIR, not HLO")
    candidates = [(source, kind) for source, kind in ((step.proto, "proto"), (step.text, "text"))
                  if source is not None]
    if not candidates:
        raise ReadError(step.label, "step has no HLO file")
    first_error: ReadError | None = None
    for source, kind in candidates:
        try:
            return _cached_hlo(root, source, kind)
        except ReadError as error:
            first_error = first_error or error
    assert first_error is not None
    raise first_error


def judged_file(root: Path, step: Step) -> tuple[str | None, ReadError | None]:
    """The file `load_step_hlo` judges `step` from, and, when that is the text standing in for
    a proto that cannot be read, the proto's error (a replay names both: the text and the
    proto may disagree). Cheap after a replay: the parsed proto is cached."""
    if step.proto is None or step.text is None:
        return step.file, None
    try:
        _cached_hlo(root, step.proto, "proto")
    except ReadError as error:
        return step.text.file, error
    return step.proto.file, None


def _cached_hlo(root: Path, source: Source, kind: str) -> HloModule:
    return FACTS.make(HLO_MODULE, root, [source], lambda: read_hlo_file(root, source, kind),
                      params=(kind,))


def load_snapshot(root: Path, execution: Execution) -> Snapshot:
    """The arguments, result and module of a recorded execution. Cached like load_step_hlo."""
    source = Source(execution.file)
    return FACTS.make(SNAPSHOT, root, [source], lambda: read_snapshot_file(root, source))

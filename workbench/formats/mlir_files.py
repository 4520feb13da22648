"""Which MLIR file is which: the index's claimer and expanders for MLIR tool output.

Claiming looks at a small head of each `.log`/`.mlir`/`.txt`/`.err`/`.out` file nobody else
claimed (and the tail of `.mlir` files, where a crash reproducer keeps its configuration):
- a print-ir log (it holds an IR dump header) becomes a module of format "mlir-print-ir";
- a crash reproducer, a module of format "mlir-reproducer";
- any other `.mlir` file holding an operation, a module of format "mlir" (one input step);
- an action log or a timing/statistics report becomes an artifact of the one pass-timeline
  module (print-ir log or IR tree) in its folder or below; with none or several there, a
  module of its own (format "mlir-actions" / "mlir-reports") so it is still listed.
Expanding reads the logs whole (once) to find their dumps and reports.
"""

from __future__ import annotations

import codecs
import os
import posixpath
import re
from pathlib import Path
from typing import BinaryIO

from workbench.formats.crash_reproducer import read_crash_reproducer
from workbench.formats.mlir_print_ir import dumps_to_steps, module_name, scan_print_ir
from workbench.formats.mlir_reports import apply_timing, find_reports
from workbench.formats.mlir_text import first_operation_line, operation_of_line
from workbench.model import Artifact, Dump, Module, Problem, Source, Step
from workbench.sources import ReadError, open_file, read_bytes

SNIFF_SUFFIXES = (".log", ".mlir", ".txt", ".err", ".out")
HEAD_BYTES = 32 * 1024
TAIL_BYTES = 4 * 1024
TIMELINE_FORMATS = ("mlir-print-ir", "mlir-ir-tree")

_DUMP_HEADER_RE = re.compile(rb"^(?:// -----// IR Dump |(?:// )?\*\*\* IR Dump )", re.MULTILINE)
_ACTION_RE = re.compile(rb"^\[thread [^\]\n]*\] (?:begins|skipping|completed) ", re.MULTILINE)
_REPORT_RE = re.compile(rb"\.\.\. (?:Pass statistics|Execution time) report \.\.\.")
_REPRODUCER_HEAD_RE = re.compile(rb"^\s*// configuration: ")


def sniff(head: bytes, tail: bytes, suffix: str) -> str | None:
    """What a file is from its first and last few KiB: "print-ir", "actions", "reports",
    "reproducer", "mlir" (plain IR), or None (not MLIR tool output)."""
    if _DUMP_HEADER_RE.search(head):
        return "print-ir"
    if _ACTION_RE.search(head):
        return "actions"
    if _REPORT_RE.search(head):
        return "reports"
    if suffix != ".mlir":
        return None
    if _REPRODUCER_HEAD_RE.match(head) or b"mlir_reproducer" in tail:
        return "reproducer"
    return "mlir"


def _read_head_tail(path: Path) -> tuple[bytes, bytes]:
    with open_file(path) as handle:
        head = handle.read(HEAD_BYTES)
        size = os.fstat(handle.fileno()).st_size
        if size <= HEAD_BYTES:
            return head, head[-TAIL_BYTES:]
        handle.seek(max(size - TAIL_BYTES, HEAD_BYTES))
        return head, handle.read()


def claim_mlir_files(dump: Dump, paths: list[str]) -> list[str]:
    """Claim MLIR logs and `.mlir` files among `paths`; return the rest."""
    unclaimed: list[str] = []
    logs: list[tuple[str, str]] = []  # (path, "actions" | "reports")
    for path in paths:
        suffix = posixpath.splitext(path)[1]
        if suffix not in SNIFF_SUFFIXES:
            unclaimed.append(path)
            continue
        try:
            head, tail = _read_head_tail(dump.path(path))
        except OSError as error:
            dump.problems.append(Problem(path, f"cannot read: {error.strerror}"))
            continue
        kind = sniff(head, tail, suffix)
        stem = posixpath.splitext(posixpath.basename(path))[0]
        if kind is None:
            unclaimed.append(path)
        elif kind == "print-ir":
            dump.modules.append(Module(id=path, name=stem, format="mlir-print-ir"))
        elif kind == "reproducer":
            dump.modules.append(Module(id=path, name=stem, format="mlir-reproducer"))
        elif kind == "mlir":
            _claim_plain_mlir(dump, path, head, stem)
        else:
            logs.append((path, kind))
    for path, kind in logs:
        _attach_log(dump, path, kind)
    return unclaimed


def _claim_plain_mlir(dump: Dump, path: str, head: bytes, stem: str) -> None:
    line = first_operation_line(head.decode("utf-8", "replace"))
    found = operation_of_line(line) if line else None
    if found is None:
        dump.problems.append(Problem(path, "no MLIR operation found at the start of the file "
                                           "(not MLIR text?)"))
        return
    op, symbol = found
    scope = f"{op} @{symbol}" if symbol else op
    module = Module(id=path, name=symbol or stem, format="mlir")
    module.steps.append(Step(index=0, pass_name="input", ir="mlir", kind="input",
                             text=Source(path), scope=scope))
    dump.modules.append(module)


def _attach_log(dump: Dump, path: str, kind: str) -> None:
    folder = posixpath.dirname(path)
    prefix = f"{folder}/" if folder else ""
    candidates = [m for m in dump.modules
                  if m.format in TIMELINE_FORMATS and m.id.startswith(prefix)]
    artifact = Artifact(kind="mlir-action-log" if kind == "actions" else "mlir-reports",
                        file=path)
    if len(candidates) == 1:
        candidates[0].artifacts.append(artifact)
        return
    stem = posixpath.splitext(posixpath.basename(path))[0]
    module = Module(id=path, name=stem, format=f"mlir-{kind}")
    module.artifacts.append(artifact)
    dump.modules.append(module)


# --- expanders ---------------------------------------------------------------------------

def _utf8_problem(handle: BinaryIO, file: str) -> Problem | None:
    """Checks the whole file in chunks (bounded memory); names the first bad byte."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    while chunk := handle.read(1 << 20):
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as error:
            return Problem(file, f"not UTF-8 text (bad byte at offset {offset + error.start}); "
                                 "dumps holding it cannot be shown")
        offset += len(chunk)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return Problem(file, "text ends inside a UTF-8 character (cut short, or still being "
                             "written?)")
    return None


def expand_print_ir(dump: Dump) -> None:
    """Fill each print-ir module's steps from its log, with timing from reports in it."""
    for module in dump.modules:
        if module.format != "mlir-print-ir" or module.steps:
            continue
        path = dump.path(module.id)
        try:
            with open_file(path) as handle:
                if os.fstat(handle.fileno()).st_size == 0:
                    dump.problems.append(Problem(module.id, "empty file (still being written?)"))
                    continue
                _fill_print_ir(dump, module, handle)
        except OSError as error:
            dump.problems.append(Problem(module.id, f"cannot read: {error.strerror}"))


def _fill_print_ir(dump: Dump, module: Module, handle: BinaryIO) -> None:
    """Reads the log in pieces, never mapped: a log truncated meanwhile (a compiler run
    again) just reads shorter, where a mapping of it would die of SIGBUS."""
    bad_text = _utf8_problem(handle, module.id)
    if bad_text is not None:
        dump.problems.append(bad_text)
    handle.seek(0)
    log = scan_print_ir(handle, module.id)
    dump.problems.extend(log.problems)
    module.steps = dumps_to_steps(log)
    module.name = module_name(module.steps) or module.name
    if not module.steps:
        dump.problems.append(Problem(module.id, "no readable IR dump in the log"))
    if log.has_reports:
        handle.seek(0)
        reports = find_reports(handle.read().decode("utf-8", "replace"), module.id)
        dump.problems.extend(reports.problems)
        if reports.timing or reports.statistics:
            module.artifacts.append(Artifact(kind="mlir-reports", file=module.id))
        apply_timing(module.steps, reports)


def expand_reproducers(dump: Dump) -> None:
    """Read each crash reproducer's pipeline and IR range into its one step."""
    for module in dump.modules:
        if module.format != "mlir-reproducer" or module.steps:
            continue
        try:
            data = read_bytes(dump.root, Source(module.id))
            reproducer = read_crash_reproducer(data, module.id)
        except ReadError as error:
            dump.problems.append(Problem(error.file, error.reason))
            continue
        module.name = reproducer.module_name or module.name
        module.steps.append(Step(index=0, pass_name="input", ir="mlir", kind="input",
                                 text=reproducer.ir, scope=reproducer.scope,
                                 pipeline=reproducer.pipeline))

"""MLIR IR printing output (`--mlir-print-ir-before/after[-all|-change|-failure]`) as steps.

The log is read once to find the dump headers; each step then points at its dump with a
`Source(file, start, end)` byte range, so no IR text is copied into the model. The log may be
a compiler's whole stderr: diagnostics, action lines and reports between dumps end the dump
before them and are otherwise ignored (reports are read by `mlir_reports`).

Header styles (MLIR's `mlir/lib/Pass/IRPrinting.cpp`):
- current: `// -----// IR Dump After <Pass>[ Failed]: <argument>{<options>}` then
  `[ ('<op>' operation[: @<sym>])] //----- //` on the same line
  (the parenthesised part appears with `--mlir-print-ir-module-scope`: it names the operation
  the pass ran on, while the dump shows the whole top-level module);
- older MLIR: `[// ]*** IR Dump After <Pass>[ Failed] ***[ ('<op>' operation[: @<sym>])]`,
  with no pass argument or options.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from workbench.formats.mlir_text import scope_label, scope_of_text
from workbench.model import Problem, Source, Step

_NEW_HEADER_RE = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<pass>.+?)(?P<failed> Failed)?: "
    r"(?P<pipeline>.*?)(?: \('(?P<op>[^']+)' operation(?:: @(?P<sym>.*?))?\))? //----- //$"
)
_OLD_HEADER_RE = re.compile(
    r"^(?:// )?\*\*\* IR Dump (?P<when>Before|After) (?P<pass>.+?)(?P<failed> Failed)? \*\*\*"
    r"(?: *\('(?P<op>[^']+)' operation(?:: @(?P<sym>[^)]*))?\)"
    r"| *\((?P<oldkind>\w+): (?P<oldsym>[^)]*)\))? *$"
)
# Lines that start something other than IR: a dump header, a report's rule, an action-log
# line, or a diagnostic (`file:line:col: error: ...`). IR lines never start this way.
_MARK_RE = re.compile(
    rb"^(?:(?P<header>// -----// IR Dump |(?:// )?\*\*\* IR Dump )"
    rb"|(?P<other>===-{8,}|\[thread |[^\s:\"]+:\d+(?::\d+)?: (?:error|warning|note|remark): ))",
    re.MULTILINE,
)
# How far into a dump to look for its top operation (after alias definitions).
_SCOPE_PEEK = 64 * 1024
# How much of a log is read at once.
_PIECE = 8 * 1024 * 1024
# The title line of a timing or statistics report (read by `mlir_reports`).
_REPORT_TITLE_RE = re.compile(rb"\.\.\. (?:Pass statistics|Execution time) report \.\.\.")


@dataclass(frozen=True)
class DumpHeader:
    """What one IR dump header says."""

    when: str  # "Before" or "After"
    pass_name: str
    failed: bool
    argument: str | None
    options: str | None  # between the braces; None when the header has no braces
    target: str | None  # the operation the pass ran on, when the header names it


@dataclass
class IrDump:
    header: DumpHeader
    start: int  # byte offset of the IR (the line after the header)
    end: int  # byte offset one past the IR's last non-blank byte
    scope: str | None = None


@dataclass
class PrintIrLog:
    """The dumps of one log, in the order they were printed, and what went wrong reading it."""

    file: str
    dumps: list[IrDump] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    has_reports: bool = False  # a timing or statistics report's title line was seen


def parse_header(line: str) -> DumpHeader | None:
    """Read one dump header line (either style); None when the line is not one."""
    # Only a line that ends as a header can be one. Checked first: on a long line that starts
    # like a header but does not end like one (cut short while the log was written, its line
    # ends lost) the pattern backtracks for minutes.
    if line.endswith(" //----- //") and (match := _NEW_HEADER_RE.match(line)):
        argument, options = split_pass_options(match["pipeline"])
        target = scope_label(match["op"], match["sym"]) if match["op"] else None
        return DumpHeader(match["when"], match["pass"], bool(match["failed"]), argument,
                          options, target)
    if match := _OLD_HEADER_RE.match(line):
        if match["op"]:
            target = scope_label(match["op"], match["sym"])
        elif match["oldkind"]:
            target = f"{match['oldkind']} @{match['oldsym']}"
        else:
            target = None
        return DumpHeader(match["when"], match["pass"], bool(match["failed"]), None, None,
                          target)
    return None


def split_pass_options(pipeline: str) -> tuple[str | None, str | None]:
    """`canonicalize{max-iterations=10}` -> ("canonicalize", "max-iterations=10")."""
    pipeline = pipeline.strip()
    if not pipeline:
        return None, None
    brace = pipeline.find("{")
    if brace < 0 or not pipeline.endswith("}"):
        return pipeline, None
    return pipeline[:brace], pipeline[brace + 1 : -1]


def _pieces(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) pieces of a file, each ending at a line end (the last at its end), so
    patterns of one line never straddle two pieces."""
    offset = 0
    carry = b""
    while more := handle.read(_PIECE):
        data = carry + more
        cut = data.rfind(b"\n") + 1
        if cut:
            yield offset, data[:cut]
            offset += cut
        carry = data[cut:]
    if carry:
        yield offset, carry


def _read_at(handle: BinaryIO, start: int, end: int) -> bytes:
    handle.seek(start)
    return handle.read(max(0, end - start))


def _rstrip_end(handle: BinaryIO, start: int, end: int) -> int:
    """`end` moved back over the whitespace before it, and to the end of the file if that is
    nearer now (truncated since it was scanned); never before `start`."""
    while end > start:
        window_start = max(start, end - 4096)
        window = _read_at(handle, window_start, end)
        if len(window) < end - window_start:
            end = window_start + len(window)
            continue
        kept = len(window.rstrip(b" \t\r\n"))
        if kept:
            return window_start + kept
        end = window_start
    return start


def scan_print_ir(data: bytes | BinaryIO, file: str) -> PrintIrLog:
    """Find every dump in `data`, the bytes of `file` or the file open for reading; never
    raises for bad content. A file is read in pieces, never whole: a log of gigabytes costs
    a few megabytes, and one truncated meanwhile (a compiler run again) reads shorter."""
    handle = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    log = PrintIrLog(file)
    # (offset, header line or None for another mark, offset of the line after it)
    marks: list[tuple[int, str | None, int]] = []
    size = 0
    for offset, piece in _pieces(handle):
        for mark in _MARK_RE.finditer(piece):
            if mark["header"] is None:
                marks.append((offset + mark.start(), None, 0))
                continue
            line_end = piece.find(b"\n", mark.start())
            line_end = len(piece) if line_end < 0 else line_end
            header_line = piece[mark.start() : line_end].decode("utf-8", "replace").rstrip("\r")
            marks.append((offset + mark.start(), header_line,
                          offset + min(line_end + 1, len(piece))))
        if not log.has_reports and _REPORT_TITLE_RE.search(piece):
            log.has_reports = True
        size = offset + len(piece)
    open_dump: IrDump | None = None
    for start, line, ir_start in marks:
        if open_dump is not None:
            open_dump.end = start
            log.dumps.append(open_dump)
            open_dump = None
        if line is None:
            continue
        header = parse_header(line)
        if header is None:
            log.problems.append(Problem(file, f"unreadable IR dump header at byte "
                                              f"{start}: {line[:120]!r}"))
            continue
        open_dump = IrDump(header, ir_start, size)
    if open_dump is not None:
        log.dumps.append(open_dump)
    for dump in log.dumps:
        dump.end = _rstrip_end(handle, dump.start, dump.end)
        peek = _read_at(handle, dump.start, min(dump.end, dump.start + _SCOPE_PEEK))
        dump.scope = scope_of_text(peek.decode("utf-8", "replace"))
        if dump.start == dump.end:
            log.problems.append(Problem(file, f"IR dump after header at byte {dump.start} is "
                                              "empty (log cut short?)"))
    return log


def dumps_to_steps(log: PrintIrLog) -> list[Step]:
    """Steps in print order; a Before dump is paired with the After dump of the same run.

    Pairing takes the most recent unpaired Before dump of the same pass (same argument,
    options and operation), so interleaved dumps of nested pipelines pair correctly.
    """
    steps: list[Step] = []
    waiting: dict[tuple, list[int]] = {}
    for index, dump in enumerate(log.dumps):
        header = dump.header
        if header.when == "Before":
            kind = "before-pass"
        else:
            kind = "pass-failed" if header.failed else "pass"
        target = header.target or dump.scope
        step = Step(
            index=index,
            pass_name=header.pass_name,
            ir="mlir",
            kind=kind,
            text=Source(log.file, dump.start, dump.end),
            scope=dump.scope,
            options=header.options,
            argument=header.argument,
            target=target,
        )
        key = (header.pass_name, header.argument, header.options, target)
        if header.when == "Before":
            waiting.setdefault(key, []).append(index)
        elif waiting.get(key):
            before = waiting[key].pop()
            steps[before].pair = index
            step.pair = before
        steps.append(step)
    return steps


def module_name(steps: list[Step]) -> str | None:
    """The top-level module's symbol, when a dump or header names it."""
    for step in steps:
        for label in (step.scope, step.target):
            if label and label.startswith("builtin.module @"):
                return label.split("@", 1)[1]
    return None

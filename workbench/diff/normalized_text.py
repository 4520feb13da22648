"""Normalized views of IR text, for comparing two dumps without renumbering noise: the data.

The dialect modules (`hlo_text`, `mlir_text`) build these; `normalize` picks the dialect.

A `NormalizedText` keeps, for every line that takes part in the comparison:

- `raw`: the line as printed (lines left out of the comparison, such as HLO source tables and
  MLIR `#loc` aliases, are not there);
- `lines` (computed on demand): the line with noise attributes stripped (metadata,
  `loc(...)`, ...) but its names as printed; the names are what the name check of
  `workbench.diff.names` pairs up;
- `keys` (computed on demand): the stripped line with every value, instruction, computation
  and block name cut to its stem (`%add.12` -> `%add`, `%5` -> `%`, `%cst_3` -> `%cst`,
  `^bb2` -> `^bb`); two lines can only be paired when their keys are equal;
- `origin`: the number of the original line it came from, so every view can show the text as
  the compiler wrote it.

A text may also have a `signature_function`: a cheap function of raw lines such that two
lines whose keys (or stripped lines) are equal have equal signatures, where the signature is
known (None where it is not). Lines whose signature no line on the other side shares cannot
pair, so the diff does not strip them or make their keys.

Stripping and key making work line by line (their patterns never cross a line end), so the
diff computes them only for the lines that differ as printed: in a pass diff most lines do
not, and those cost nothing beyond being compared once.

Comparing keys and then checking that the names of paired lines correspond one to one (a
bijection, `workbench.diff.names`) is comparison modulo renaming: a pass that only renumbers
shows no change, an inserted op does not shift every later name, and swapped operands are still
a change. `canonical_lines()` gives the other classic form, names renamed by definition order
within their computation or region, for display.

This is line-oriented text work (regular expressions over joined lines, C-level passes over
the line list for structure): no parser, so it is fast and never fails on text a parser would
reject.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Literal

TextKind = Literal["hlo", "mlir", "text"]
LineMap = Callable[[list[str]], list[str]]
SignatureMap = Callable[[list[str]], list[str | None]]


@dataclass(frozen=True)
class NormalizeOptions:
    """Which kinds of noise to remove; every part can be switched off on its own."""

    names: bool = True  # compare modulo renaming of values, instructions, computations, blocks
    metadata: bool = True  # HLO metadata={...}
    backend_config: bool = True  # HLO backend_config=...
    frontend_attributes: bool = True  # HLO frontend_attributes={...}
    source_tables: bool = True  # HLO FileNames/FunctionNames/FileLocations/StackFrames
    locations: bool = True  # MLIR loc(...) and #loc alias definitions

    @classmethod
    def raw(cls) -> NormalizeOptions:
        """No normalization at all: lines compare as written."""
        return cls(**{f.name: False for f in fields(cls)})

    def without(self, *parts: str) -> NormalizeOptions:
        return replace(self, **{part: False for part in parts})

    @property
    def is_raw(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))


@dataclass
class Section:
    """A computation (HLO), a function or other symbol op (MLIR), or the text outside them.

    `header` is the index (into the kept lines) of the line that opens it, None for the
    module-level text; `end` is one past its closing line (sections nest in MLIR; they come
    in the order of their headers). `name` is as printed
    (`%fused_computation.1`, `func.func @main`).
    """

    name: str
    header: int | None
    kind: str  # "computation", "entry", "function", "module"
    end: int | None = None

    @property
    def span(self) -> tuple[int, int]:
        """(header, end) of a section that has lines of its own (every one but the first)."""
        assert self.header is not None and self.end is not None, self.name
        return self.header, self.end


@dataclass
class NormalizedText:
    kind: TextKind
    options: NormalizeOptions
    original: list[str]
    raw: list[str]
    origin: Sequence[int]
    sections: list[Section] = field(default_factory=list)
    # raw lines -> stripped lines; None when nothing is stripped (lines are the raw lines)
    strip_function: LineMap | None = None
    # stripped lines -> keys; None when names are compared as printed (keys are the lines)
    key_function: LineMap | None = None
    names_in_raw: bool = True  # False when only the stripped lines print names with sigils
    # raw lines -> signatures (see the module doc); None when the text kind has none
    signature_function: SignatureMap | None = None
    # the text -> its lines with names renamed by definition order; None: no renaming
    canonical_function: Callable[[NormalizedText], list[str]] | None = None
    _lines: list[str] | None = field(default=None, repr=False)
    _keys: list[str] | None = field(default=None, repr=False)
    _line_section: list[int] | None = field(default=None, repr=False)
    _heads: list[int] | None = field(default=None, repr=False)
    _ends: list[int] | None = field(default=None, repr=False)
    _section_starts: list[int] | None = field(default=None, repr=False)
    _section_names: set[str] | None = field(default=None, repr=False)

    @property
    def section_starts(self) -> list[int]:
        """Where the innermost section may change: line 0, every section's first line and the
        line after its last (sorted; computed once)."""
        if self._section_starts is None:
            edges = {0}
            for section in self.sections[1:]:
                edges.update(section.span)
            total = len(self.raw)
            self._section_starts = sorted(edge for edge in edges if edge < total)
        return self._section_starts

    @property
    def section_names(self) -> set[str]:
        """Section names as the name check reads them (`%` put back on HLO names printed
        without it; computed once)."""
        if self._section_names is None:
            names = {s.name for s in self.sections[1:]}
            if self.kind == "hlo":
                names = {name if name.startswith("%") else "%" + name for name in names}
            self._section_names = names
        return self._section_names

    @property
    def line_section(self) -> list[int]:
        """The innermost section of every line (computed once, on first use)."""
        if self._line_section is None:
            line_section = [0] * len(self.raw)
            for index, section in enumerate(self.sections[1:], 1):  # outer ones first
                start, end = section.header, section.end
                assert start is not None and end is not None
                line_section[start:end] = [index] * (end - start)
            self._line_section = line_section
        return self._line_section

    def section_of(self, line: int) -> int:
        """The innermost section of one line, without computing every line's."""
        if self._line_section is not None:
            return self._line_section[line]
        if self._heads is None or self._ends is None:
            spans = [s.span for s in self.sections[1:]]
            self._heads = [head for head, _ in spans]
            self._ends = [0] + [end for _, end in spans]  # indexed like `sections`
        for index in range(bisect_right(self._heads, line), 0, -1):
            if line < self._ends[index]:
                return index
        return 0

    @property
    def lines(self) -> list[str]:
        """Every line with its noise stripped (computed once, on first use)."""
        if self._lines is None:
            self._lines = self.strip_function(self.raw) if self.strip_function else self.raw
        return self._lines

    @property
    def keys(self) -> list[str]:
        """Every line's key (computed once, on first use: a diff usually needs only some)."""
        if self._keys is None:
            self._keys = self.key_function(self.lines) if self.key_function else self.lines
        return self._keys

    def strip(self, lines: list[str]) -> list[str]:
        """`lines` (raw lines of this text) with their noise stripped."""
        return self.strip_function(lines) if self.strip_function else lines

    def key(self, lines: list[str]) -> list[str]:
        """Keys of `lines` (stripped lines of this text)."""
        return self.key_function(lines) if self.key_function else lines

    def canonical_lines(self) -> list[str]:
        """Lines with names renamed by definition order within their scope (see module doc)."""
        if not self.options.names or self.canonical_function is None:
            return list(self.lines)
        return self.canonical_function(self)

    def restrict(self, index: int) -> NormalizedText:
        """Only the lines of section `index` (and the sections nested in it): see
        `restrict_lines`."""
        section = self.sections[index]
        if section.header is None or section.end is None:
            return self
        return self.restrict_lines(section.header, section.end)

    def trimmed(self) -> NormalizedText:
        """Without the blank lines at the end: a dump ends with one, an operation cut out of a
        dump does not (for comparing the two)."""
        end = len(self.raw)
        while end and not self.raw[end - 1].strip():
            end -= 1
        return self if end == len(self.raw) else self.restrict_lines(0, end)

    def restrict_lines(self, start: int, end: int) -> NormalizedText:
        """Only lines [start, end) (one operation, with the sections nested in it), dedented
        by the indentation of the first: a function printed inside its module compares with
        the same function printed alone (a function-scope dump)."""
        raw = self.raw[start:end]
        indent = len(raw[0]) - len(raw[0].lstrip(" ")) if raw else 0
        if indent:
            prefix = " " * indent
            raw = [line[indent:] if line.startswith(prefix) else line.lstrip(" ")
                   for line in raw]
        sections = [Section("(module)", None, "module")]
        sections += [replace(s, header=s.header - start, end=(s.end or end) - start)
                     for s in self.sections[1:]
                     if s.header is not None and start <= s.header < end]
        return NormalizedText(self.kind, self.options, self.original, raw,
                              self.origin[start:end], sections, self.strip_function,
                              self.key_function, self.names_in_raw, self.signature_function,
                              self.canonical_function)


def split_lines(text: str) -> list[str]:
    """Lines without their ends; a final newline does not make an extra empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def keep_lines(lines: list[str], dropped: list[tuple[int, int]]
               ) -> tuple[list[str], Sequence[int]]:
    """`lines` without the [start, end) ranges of `dropped` (sorted), and where each kept
    line came from."""
    if not dropped:
        return lines, range(len(lines))
    kept: list[str] = []
    origin: list[int] = []
    previous = 0
    for start, end in [*dropped, (len(lines), len(lines))]:
        kept += lines[previous:start]
        origin += range(previous, start)
        previous = end
    return kept, origin

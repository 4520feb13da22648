"""Normalized views of IR text, for comparing two dumps without renumbering noise.

A `NormalizedText` keeps, for every line that takes part in the comparison:

- `lines`: the line with noise attributes stripped (metadata, `loc(...)`, ...) but its names as
  printed; the names are what the name check of `workbench.diff.names` pairs up;
- `keys` (computed on demand): the same line with every value, instruction, computation and
  block name cut to its stem (`%add.12` -> `%add`, `%5` -> `%`, `%cst_3` -> `%cst`,
  `^bb2` -> `^bb`); two lines can only be paired when their keys are equal;
- `origin`: the number of the original line it came from, so every view can show the text as
  the compiler wrote it.

Comparing keys and then checking that the names of paired lines correspond one to one (a
bijection, `workbench.diff.names`) is comparison modulo renaming: a pass that only renumbers
shows no change, an inserted op does not shift every later name, and swapped operands are still
a change. `canonical_lines()` gives the other classic form, names renamed by definition order
within their computation or region, for display and hashing.

This is line-oriented text work (regular expressions over the whole text, a single pass over
lines for structure): no parser, so it is fast and never fails on text a parser would reject.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Literal

TextKind = Literal["hlo", "mlir", "text"]


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

    `header` is the index (into the normalized lines) of the line that opens it, None for the
    module-level text. `name` is as printed (`%fused_computation.1`, `@main`).
    """

    name: str
    header: int | None
    kind: str  # "computation", "entry", "function", "module"


@dataclass
class NormalizedText:
    kind: TextKind
    options: NormalizeOptions
    original: list[str]
    lines: list[str]
    origin: list[int]
    sections: list[Section] = field(default_factory=list)
    line_section: list[int] = field(default_factory=list)  # section index of each line
    # lines -> their keys; None when names are compared as printed (keys are the lines)
    key_function: Callable[[list[str]], list[str]] | None = None
    _keys: list[str] | None = field(default=None, repr=False)

    @property
    def keys(self) -> list[str]:
        """Every line's key (computed once, on first use: a diff usually needs only some)."""
        if self._keys is None:
            self._keys = self.key_function(self.lines) if self.key_function else self.lines
        return self._keys

    def keys_of(self, start: int, end: int) -> list[str]:
        """Keys of lines [start, end), without computing the others."""
        if self._keys is not None or self.key_function is None:
            return self.keys[start:end]
        return self.key_function(self.lines[start:end])

    def canonical_lines(self) -> list[str]:
        """Lines with names renamed by definition order within their scope (see module doc)."""
        if not self.options.names:
            return list(self.lines)
        if self.kind == "hlo":
            from workbench.diff.hlo_text import canonical_hlo_lines

            return canonical_hlo_lines(self)
        if self.kind == "mlir":
            from workbench.diff.mlir_text import canonical_mlir_lines

            return canonical_mlir_lines(self)
        return list(self.lines)

    def digest(self) -> str:
        """A hash of the canonical form: equal digests mean equal modulo the options' noise."""
        h = hashlib.blake2b(digest_size=16)
        h.update(self.kind.encode())
        for line in self.canonical_lines():
            h.update(line.encode())
            h.update(b"\n")
        return h.hexdigest()


def detect_kind(text: str) -> TextKind:
    """HLO text starts with `HloModule`; MLIR has ops, `func.func`, `module` or `#alias = `."""
    head = text[:4096].lstrip()
    if head.startswith("HloModule"):
        return "hlo"
    for line in head.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith(("module", "func.func", "builtin.module", "#", "!", '"builtin.',
                                "util.", "%", "func @", "gpu.module", "hal.", "{-#", '"')):
            return "mlir"
        break
    return "text"


def normalize(text: str, kind: TextKind | None = None,
              options: NormalizeOptions | None = None) -> NormalizedText:
    """Normalize `text` (HLO or MLIR; detected when `kind` is None; plain text otherwise)."""
    options = options or NormalizeOptions()
    kind = kind or detect_kind(text)
    if kind == "hlo":
        from workbench.diff.hlo_text import normalize_hlo

        return normalize_hlo(text, options)
    if kind == "mlir":
        from workbench.diff.mlir_text import normalize_mlir

        return normalize_mlir(text, options)
    original = split_lines(text)
    return NormalizedText("text", options, original, original, list(range(len(original))),
                          [Section("", None, "module")], [0] * len(original))


def split_lines(text: str) -> list[str]:
    """Lines without their ends; a final newline does not make an extra empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines

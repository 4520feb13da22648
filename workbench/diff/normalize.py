"""Normalize IR text for comparison: pick the dialect (HLO, MLIR, plain text) and run its
normalizer. What a normalized text is, and why, is `workbench.diff.normalized_text`."""

from __future__ import annotations

from workbench.diff.normalized_text import (
    NormalizedText,
    NormalizeOptions,
    Section,
    TextKind,
    split_lines,
)
from workbench.gc_pause import gc_paused

__all__ = ["NormalizeOptions", "NormalizedText", "TextKind", "detect_kind", "normalize"]


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

        with gc_paused():
            return normalize_hlo(text, options)
    if kind == "mlir":
        from workbench.diff.mlir_text import normalize_mlir

        with gc_paused():
            return normalize_mlir(text, options)
    original = split_lines(text)
    return NormalizedText("text", options, original, original, range(len(original)),
                          [Section("", None, "module")])



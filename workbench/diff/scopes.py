"""Comparing MLIR dumps of different scopes: a whole module against one of its functions.

MLIR prints, after a pass nested in a pipeline (`func.func(cse)`), only the operation the pass
ran on, and after a module pass the whole module (`Step.scope` says which). Comparing two such
dumps means comparing like with like: the function inside the module dump with the function
dump. And to tell whether a module pass changed anything, its dump is compared with the module
as it stood before it: the last module dump with the functions printed since spliced in.

Scopes are labels (`func.func @main`) or, for IR tree folders, paths of labels from the
top-level module down (`builtin.module @m/func.func @main`).
"""

from __future__ import annotations

from workbench.diff.normalize import NormalizedText, normalize
from workbench.formats.mlir_text import operation_of_line


def relative_scope(outer: str | None, inner: str | None) -> list[str] | None:
    """The labels leading from scope `outer` down to scope `inner`: [] when they are the same
    scope (an HLO module's steps have no scope: all the same), None when `outer` does not hold
    `inner`."""
    if outer == inner:
        return []
    if outer is None or inner is None:
        return None
    if inner.startswith(outer + "/"):
        return inner[len(outer) + 1:].split("/")
    if "/" not in outer and "/" not in inner and _is_module(outer) and not _is_module(inner):
        return [inner]  # a module dump holds every operation of the module
    return None


def _is_module(label: str) -> bool:
    return label.split(" ", 1)[0] in ("builtin.module", "module")


def restrict(text: NormalizedText, path: list[str]) -> NormalizedText | None:
    """The part of `text` that `path` leads to; None when it is not there."""
    found = _find(text, path)
    return None if found is None else found[1]


def _find(text: NormalizedText, path: list[str]) -> tuple[int, NormalizedText] | None:
    """(first line in `text`, restricted text) of the operation at `path`."""
    offset = 0
    for label in path:
        span = _locate(text, label)
        if span is None:
            return None
        offset += span[0]
        text = text.restrict_lines(*span)
    return offset, text


def _locate(text: NormalizedText, label: str) -> tuple[int, int] | None:
    """Lines [start, end) of the operation `label` inside `text`: a section of that name, or,
    for an operation without a symbol (a nested `builtin.module`, `util.initializer`), the
    first operation of that name directly inside the top one."""
    if "@" in label:
        for section in text.sections[1:]:
            if section.name == label:
                assert section.header is not None and section.end is not None
                return section.header, section.end
        return None
    depth = 0
    start = None
    for number, line in enumerate(text.raw):
        body = line.strip()
        if body.startswith("}"):
            depth -= 1
            if start is not None and depth == 1:
                return start, number + 1
            if body.endswith("{"):
                depth += 1
            continue
        if body.endswith("{"):
            if start is None and depth == 1:
                found = operation_of_line(body)
                if found is not None and found[0] == label and found[1] is None:
                    start = number
            depth += 1
    return None


def splice(base: NormalizedText, path: list[str], part: NormalizedText) -> NormalizedText | None:
    """A whole dump `base` with the operation at `path` replaced by `part` (a dump of that
    operation alone), normalized again; None when `base` does not hold that operation."""
    if not path:
        return part
    found = _find(base, path)
    top = _top_operation(part)
    if found is None or top is None:
        return None
    offset, section = found
    start = base.origin[offset]
    end = base.origin[offset + len(section.raw) - 1] + 1
    header = base.original[start]
    indent = header[:len(header) - len(header.lstrip(" "))]
    replacement = part.original[part.origin[top[0]]:part.origin[top[1] - 1] + 1]
    lines = base.original[:start] + [indent + line if line else line for line in replacement] \
        + base.original[end:]
    return normalize("\n".join(lines), base.kind, base.options)


def _top_operation(text: NormalizedText) -> tuple[int, int] | None:
    """Lines [start, end) of the operation a dump shows (alias definitions left out)."""
    kept = [k for k, line in enumerate(text.raw)
            if line.strip() and not line.startswith(("#", "!", "//"))]
    return (kept[0], kept[-1] + 1) if kept else None

"""The name check: paired lines must use corresponding names, one to one.

Lines are paired on their keys, where every name is cut to its stem; that alone would call
`subtract(%sub.14, %sub.15)` and `subtract(%sub.15, %sub.14)` equal. This module restores the
information: over all paired lines, the name printed on one side must always go with the same
name on the other (a bijection, built as definitions are met). A paired line that breaks it is
a real change (rewired operands, swapped call targets) and is unpaired.

The common case costs a few C-level operations per section: the set of (a-name, b-name) pairs
is a bijection exactly when it has as many elements as there are distinct names on each side.
Only a section that fails this goes through the ordered check, name by name, where a
definition rebinds a name (names are reused across computations, functions and sibling
regions) and a use must agree with the current binding.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from workbench.diff.line_diff import Block
from workbench.diff.normalize import NormalizedText

_TOKENS = {
    "hlo": re.compile(r"%[\w.\-]+"),
    "mlir": re.compile(r"[%^][\w$.\-]+"),
}
_MLIR_DEFINED_BEFORE = re.compile(r"\s*((?:%[\w$.\-]+(?::\d+)?(?:, )?)+) = ")
_HLO_DEFINED = re.compile(r"\s*(?:ROOT )?%[\w.\-]+ = |(?:ENTRY )?%[\w.\-]+ ")


def check_names(a: NormalizedText, b: NormalizedText, blocks: list[Block],
                renamed: list[Block]) -> list[Block]:
    """`blocks` without the paired lines whose names do not correspond.

    `renamed` are the blocks paired on keys (the others pair identical lines). Only sections
    holding some of them are checked: in the others every name pairs with itself. Computation
    names (HLO) cross sections and are checked over the whole module when some were renamed.
    """
    token = _TOKENS.get(a.kind)
    if token is None or not a.options.names or not blocks:
        return blocks
    findall = token.findall
    touched = {section for section, *_ in _chunks_by_section(a, renamed)}
    chunks = _chunks_by_section(a, blocks)
    broken: set[int] = set()  # a-indices of pairs that fail the check
    lines_a, lines_b = a.lines, b.lines
    by_section: dict[int, list[tuple[int, int, int]]] = {}
    for section, i, j, n in chunks:
        if section in touched:
            by_section.setdefault(section, []).append((i, j, n))

    global_pairs: set[tuple[str, str]] = set()
    for section_chunks in by_section.values():
        tokens_a: list[str] = []
        tokens_b: list[str] = []
        aligned = True
        for i, j, n in section_chunks:
            ta = findall("\n".join(lines_a[i:i + n]))
            tb = findall("\n".join(lines_b[j:j + n]))
            if len(ta) != len(tb):
                aligned = False
                break
            tokens_a += ta
            tokens_b += tb
        if aligned:
            pairs = set(zip(tokens_a, tokens_b, strict=True))
            if len(pairs) == len(set(tokens_a)) == len(set(tokens_b)):
                global_pairs |= pairs
                continue
        broken |= _ordered_check(a, b, section_chunks, token)

    if a.kind == "hlo" and global_pairs:
        # Computation names are defined once and used from other computations: check them
        # across the whole module.
        computations_a = {s.name for s in a.sections[1:]}
        computations_b = {s.name for s in b.sections[1:]}
        renamed_calls = [(x, y) for x, y in global_pairs
                         if x != y and (x in computations_a or y in computations_b)]
        if renamed_calls:
            every = [(i, j, n) for _, i, j, n in chunks]
            broken |= _ordered_check(a, b, every, token, only=computations_a | computations_b)
    if not broken:
        return blocks
    return _remove_pairs(blocks, broken)


def _chunks_by_section(a: NormalizedText, blocks: list[Block]) -> list[tuple[int, int, int, int]]:
    """Blocks cut where a's section changes: (section, i, j, n)."""
    sections = a.line_section
    starts = [0]
    for index in range(1, len(sections)):
        if sections[index] != sections[index - 1]:
            starts.append(index)
    chunks = []
    for i, j, n in blocks:
        end = i + n
        while i < end:
            run = bisect_right(starts, i) - 1
            run_end = starts[run + 1] if run + 1 < len(starts) else len(sections)
            stop = min(end, run_end)
            chunks.append((sections[i], i, j, stop - i))
            j += stop - i
            i = stop
    return chunks


def _ordered_check(a: NormalizedText, b: NormalizedText, chunks: list[tuple[int, int, int]],
                   token: re.Pattern[str], only: set[str] | None = None) -> set[int]:
    """Walk paired lines in order; return the a-indices of pairs whose names disagree."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    broken: set[int] = set()
    hlo = a.kind == "hlo"
    for i, j, n in chunks:
        for k in range(n):
            line_a = a.lines[i + k]
            line_b = b.lines[j + k]
            found_a = list(token.finditer(line_a))
            found_b = list(token.finditer(line_b))
            if len(found_a) != len(found_b):
                broken.add(i + k)
                continue
            if not found_a:
                continue
            limit_a = _definition_end(line_a, hlo)
            ok = True
            for match_a, match_b in zip(found_a, found_b, strict=True):
                name_a = match_a.group(0)
                name_b = match_b.group(0)
                if only is not None and name_a not in only and name_b not in only:
                    continue
                after = line_a[match_a.end():match_a.end() + 3]
                if match_a.start() < limit_a or after.startswith(": ") or after == " = ":
                    old_b = forward.get(name_a)
                    if old_b is not None and backward.get(old_b) == name_a:
                        del backward[old_b]
                    old_a = backward.get(name_b)
                    if old_a is not None and forward.get(old_a) == name_b:
                        del forward[old_a]
                    forward[name_a] = name_b
                    backward[name_b] = name_a
                    continue
                bound_b = forward.get(name_a)
                bound_a = backward.get(name_b)
                if bound_b is None and bound_a is None:
                    forward[name_a] = name_b
                    backward[name_b] = name_a
                elif bound_b != name_b or bound_a != name_a:
                    ok = False
            if not ok:
                broken.add(i + k)
    return broken


def _definition_end(line: str, hlo: bool) -> int:
    """Where the names a line defines end (0 when it defines none by position)."""
    if hlo:
        match = _HLO_DEFINED.match(line)
        return match.end() if match else 0
    stripped = line.lstrip()
    if stripped.startswith("^"):  # a block label (and its arguments) defines the block
        return len(line) - len(stripped) + len(stripped.split("(", 1)[0].split(":", 1)[0])
    match = _MLIR_DEFINED_BEFORE.match(line)
    return match.end() if match else 0


def _remove_pairs(blocks: list[Block], broken: set[int]) -> list[Block]:
    out: list[Block] = []
    for i, j, n in blocks:
        start = 0
        for k in range(n):
            if i + k in broken:
                if k > start:
                    out.append((i + start, j + start, k - start))
                start = k + 1
        if n > start:
            out.append((i + start, j + start, n - start))
    return out

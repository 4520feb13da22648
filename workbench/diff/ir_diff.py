"""Diff two normalized IR texts: paired lines, hunks for navigation, per-section summary.

Positions in `IRDiff.opcodes` index the normalized lines; `NormalizedText.origin` maps them
back to the original lines, which is what every view shows.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Literal

from workbench.diff.line_diff import Block, intern_lines, matching_blocks, merge_blocks
from workbench.diff.names import check_names
from workbench.diff.normalize import NormalizedText, NormalizeOptions, TextKind, normalize

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]


@dataclass
class SectionChange:
    """One computation or function: `status` is changed, added, removed or unchanged."""

    name: str  # as printed on the newer side (the older side's name when removed)
    status: str
    kind: str
    old_name: str | None = None
    removed_lines: int = 0
    added_lines: int = 0


@dataclass
class HunkLine:
    """`op` is " ", "-" or "+"; `a`/`b` are 0-based original line numbers (None if absent)."""

    op: str
    a: int | None
    b: int | None
    text: str


@dataclass
class Hunk:
    a_start: int  # 0-based original line of the first line shown on side a
    a_count: int
    b_start: int
    b_count: int
    section: str  # the computation or function the first change is in
    lines: list[HunkLine] = field(default_factory=list)


@dataclass
class IRDiff:
    a: NormalizedText
    b: NormalizedText
    opcodes: list[Opcode]

    @property
    def equal(self) -> bool:
        return all(tag == "equal" for tag, *_ in self.opcodes)

    @property
    def removed(self) -> int:
        return sum(i2 - i1 for tag, i1, i2, _, _ in self.opcodes if tag != "equal")

    @property
    def added(self) -> int:
        return sum(j2 - j1 for tag, _, _, j1, j2 in self.opcodes if tag != "equal")

    def sections(self) -> list[SectionChange]:
        return summarize_sections(self)

    def hunks(self, context: int = 3) -> list[Hunk]:
        return make_hunks(self, context)


def diff_texts(text_a: str, text_b: str, kind: TextKind | None = None,
               options: NormalizeOptions | None = None) -> IRDiff:
    """Normalize and diff two IR texts (the kind is detected from `text_a` when not given)."""
    a = normalize(text_a, kind, options)
    b = normalize(text_b, kind or a.kind, options)
    return diff_normalized(a, b)


def diff_normalized(a: NormalizedText, b: NormalizedText) -> IRDiff:
    """Pair computations/functions first (their header lines become anchors); within the gaps
    between anchors pair identical lines, then, in what is left, lines with equal keys; last,
    drop pairs whose names do not correspond (`workbench.diff.names`).

    Identical lines first keeps the common case cheap: keys (names cut to stems) are computed
    only for the lines that differ as printed.
    """
    if a.lines == b.lines:
        blocks: list[Block] = [(0, 0, len(a.lines))] if a.lines else []
        return IRDiff(a, b, _opcodes(blocks, len(a.lines), len(b.lines)))
    ids_a, ids_b = intern_lines(a.lines, b.lines)
    same: list[Block] = []
    renamed: list[Block] = []
    prev_i = prev_j = 0
    for ha, hb in [*pair_sections(a, b), (len(ids_a), len(ids_b))]:
        for i, j, n in matching_blocks(ids_a[prev_i:ha], ids_b[prev_j:hb]):
            same.append((prev_i + i, prev_j + j, n))
        prev_i, prev_j = ha, hb
    same = merge_blocks(same)
    if a.key_function is not None and b.key_function is not None:
        i = j = 0
        for bi, bj, n in [*same, (len(ids_a), len(ids_b), 0)]:
            if i < bi and j < bj:
                keys_a, keys_b = intern_lines(a.keys_of(i, bi), b.keys_of(j, bj))
                renamed.extend((i + x, j + y, m) for x, y, m in matching_blocks(keys_a, keys_b))
            i, j = bi + n, bj + n
    blocks = merge_blocks(sorted(same + renamed))
    if renamed and a.kind == b.kind:
        blocks = check_names(a, b, blocks, renamed)
    return IRDiff(a, b, _opcodes(blocks, len(a.lines), len(b.lines)))


def pair_sections(a: NormalizedText, b: NormalizedText) -> list[tuple[int, int]]:
    """Header lines (a, b) of the computations/functions that correspond, in order: first by
    equal header keys (longest common subsequence), then, between those, by equal name stems
    (a computation whose signature changed is still the same computation)."""
    heads_a = [s.header for s in a.sections if s.header is not None]
    heads_b = [s.header for s in b.sections if s.header is not None]
    if not heads_a or not heads_b:
        return []
    keys_a, keys_b = intern_lines(_header_keys(a, heads_a), _header_keys(b, heads_b))
    pairs: list[tuple[int, int]] = []
    prev_x = prev_y = 0
    for x, y, n in [*matching_blocks(keys_a, keys_b), (len(heads_a), len(heads_b), 0)]:
        if x > prev_x and y > prev_y:  # unpaired headers on both sides: try their names
            names_a, names_b = intern_lines(
                [_header_stem(key) for key in _header_keys(a, heads_a[prev_x:x])],
                [_header_stem(key) for key in _header_keys(b, heads_b[prev_y:y])])
            for u, v, m in matching_blocks(names_a, names_b):
                pairs.extend((heads_a[prev_x + u + k], heads_b[prev_y + v + k]) for k in range(m))
        pairs.extend((heads_a[x + k], heads_b[y + k]) for k in range(n))
        prev_x, prev_y = x + n, y + n
    return pairs


def _header_keys(text: NormalizedText, heads: list[int]) -> list[str]:
    lines = [text.lines[h] for h in heads]
    return text.key_function(lines) if text.key_function else lines


def _header_stem(key: str) -> str:
    """`ENTRY %main (x: ...) -> ... {` -> `ENTRY %main`; `func.func @f(...` -> `func.func @f`."""
    at = key.find("@")
    if at >= 0:
        end = at + 1
        while end < len(key) and (key[end].isalnum() or key[end] in "_$.-"):
            end += 1
        return key[:end]
    return key.split(" (", 1)[0]


def same_ir(a: NormalizedText, b: NormalizedText) -> bool:
    """True when the two texts are equal modulo normalization (no diff is computed)."""
    if a.lines == b.lines:
        return True
    if len(a.lines) != len(b.lines) or a.keys != b.keys:
        return False
    whole = [(0, 0, len(a.keys))]
    return check_names(a, b, whole, whole) == whole


def _opcodes(blocks: list[Block], len_a: int, len_b: int) -> list[Opcode]:
    opcodes: list[Opcode] = []
    i = j = 0
    for bi, bj, n in [*blocks, (len_a, len_b, 0)]:
        if i < bi and j < bj:
            opcodes.append(("replace", i, bi, j, bj))
        elif i < bi:
            opcodes.append(("delete", i, bi, j, j))
        elif j < bj:
            opcodes.append(("insert", i, i, j, bj))
        if n:
            opcodes.append(("equal", bi, bi + n, bj, bj + n))
        i, j = bi + n, bj + n
    return opcodes


def make_hunks(diff: IRDiff, context: int = 3) -> list[Hunk]:
    """Changes with `context` unchanged lines around them; close changes share a hunk."""
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    codes = diff.opcodes
    for index, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            if not group:
                continue
            if i2 - i1 > 2 * context and index + 1 < len(codes):
                group.append((tag, i1, i1 + context, j1, j1 + context))
                groups.append(group)
                group = []
            elif index + 1 == len(codes):
                group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            else:
                group.append((tag, i1, i2, j1, j2))
            continue
        if not group and index > 0:
            _, pi1, pi2, _, pj2 = codes[index - 1]
            keep = min(context, pi2 - pi1)
            group.append(("equal", pi2 - keep, pi2, pj2 - keep, pj2))
        group.append((tag, i1, i2, j1, j2))
    if group:
        groups.append(group)
    return [_hunk(diff, g) for g in groups if any(tag != "equal" for tag, *_ in g)]


def _hunk(diff: IRDiff, group: list[Opcode]) -> Hunk:
    a, b = diff.a, diff.b
    lines: list[HunkLine] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                lines.append(HunkLine(" ", a.origin[i], b.origin[j], a.original[a.origin[i]]))
            continue
        for i in range(i1, i2):
            lines.append(HunkLine("-", a.origin[i], None, a.original[a.origin[i]]))
        for j in range(j1, j2):
            lines.append(HunkLine("+", None, b.origin[j], b.original[b.origin[j]]))
    _, i1, _, j1, _ = group[0]
    i2, j2 = group[-1][2], group[-1][4]
    first_change = next(op for op in group if op[0] != "equal")
    if first_change[3] < first_change[4]:
        section = b.sections[b.line_section[first_change[3]]].name
    else:
        section = a.sections[a.line_section[first_change[1]]].name
    a_start = a.origin[i1] if i1 < len(a.origin) else len(a.original)
    b_start = b.origin[j1] if j1 < len(b.origin) else len(b.original)
    a_count = a.origin[i2 - 1] - a_start + 1 if i2 > i1 else 0
    b_count = b.origin[j2 - 1] - b_start + 1 if j2 > j1 else 0
    return Hunk(a_start, a_count, b_start, b_count, section, lines)


def summarize_sections(diff: IRDiff) -> list[SectionChange]:
    """Pair computations/functions through their matched header lines and count changes."""
    a, b = diff.a, diff.b
    equal_blocks = [(i1, j1, i2 - i1) for tag, i1, i2, j1, _ in diff.opcodes if tag == "equal"]
    starts = [i for i, _, _ in equal_blocks]
    partner_of_a: dict[int, int] = {0: 0}
    for index, section in enumerate(a.sections):
        if section.header is None:
            continue
        k = bisect_right(starts, section.header) - 1
        if k >= 0:
            i, j, n = equal_blocks[k]
            if section.header < i + n:
                partner = b.line_section[j + section.header - i]
                if b.sections[partner].header == j + section.header - i:
                    partner_of_a[index] = partner
    removed = [0] * len(a.sections)
    added = [0] * len(b.sections)
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            continue
        for i in range(i1, i2):
            removed[a.line_section[i]] += 1
        for j in range(j1, j2):
            added[b.line_section[j]] += 1
    out: list[SectionChange] = []
    paired_b = set(partner_of_a.values())
    for index, section in enumerate(a.sections):
        partner = partner_of_a.get(index)
        if partner is None:
            out.append(SectionChange(section.name, "removed", section.kind,
                                     removed_lines=removed[index]))
            continue
        other = b.sections[partner]
        changes = removed[index] + added[partner]
        out.append(SectionChange(other.name, "changed" if changes else "unchanged", other.kind,
                                 old_name=section.name if section.name != other.name else None,
                                 removed_lines=removed[index], added_lines=added[partner]))
    for index, section in enumerate(b.sections):
        if index not in paired_b:
            out.append(SectionChange(section.name, "added", section.kind,
                                     added_lines=added[index]))
    return out


def section_counts(changes: list[SectionChange]) -> dict[str, int]:
    counts = {"changed": 0, "added": 0, "removed": 0, "unchanged": 0}
    for change in changes:
        counts[change.status] += 1
    return counts

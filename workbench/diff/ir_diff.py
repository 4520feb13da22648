"""Diff two normalized IR texts: paired lines, hunks for navigation, per-section summary.

Sections (computations, functions) are paired first (`workbench.diff.sections`), then lines,
in rounds (`diff_normalized`), then names are checked (`workbench.diff.names`).

Positions in `IRDiff.opcodes` index the normalized lines; `NormalizedText.origin` maps them
back to the original lines, which is what every view shows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import add, ne
from typing import Literal

from workbench.diff.line_diff import (
    Block,
    Gap,
    gaps_between,
    matching_blocks_in,
    merge_blocks,
)
from workbench.diff.names import check_names
from workbench.diff.normalize import (
    NormalizedText,
    NormalizeOptions,
    TextKind,
    normalize,
)
from workbench.diff.sections import identical_sections, pair_sections
from workbench.gc_pause import gc_paused

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
    """Changes and their context; `lines` are made on first use (`text_lines` is the cheap
    way to print them)."""

    a_start: int  # 0-based original line of the first line shown on side a
    a_count: int
    b_start: int
    b_count: int
    section: str  # the computation or function the first change is in
    ops: list[Opcode] = field(default_factory=list, repr=False)
    a: NormalizedText | None = field(default=None, repr=False)
    b: NormalizedText | None = field(default=None, repr=False)
    _lines: list[HunkLine] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[HunkLine]:
        if self._lines is None:
            a, b = self.a, self.b
            assert a is not None and b is not None
            lines: list[HunkLine] = []
            for tag, i1, i2, j1, j2 in self.ops:
                if tag == "equal":
                    lines += map(HunkLine, repeat(" "), a.origin[i1:i2], b.origin[j1:j2],
                                 _originals(a, i1, i2))
                    continue
                lines += map(HunkLine, repeat("-"), a.origin[i1:i2], repeat(None),
                             _originals(a, i1, i2))
                lines += map(HunkLine, repeat("+"), repeat(None), b.origin[j1:j2],
                             _originals(b, j1, j2))
            self._lines = lines
        return self._lines

    def text_lines(self) -> list[str]:
        """The lines as `diff -u` prints them: the mark, then the original text."""
        a, b = self.a, self.b
        assert a is not None and b is not None
        out: list[str] = []
        for tag, i1, i2, j1, j2 in self.ops:
            if tag == "equal":
                out += map(add, repeat(" "), _originals(a, i1, i2))
                continue
            out += map(add, repeat("-"), _originals(a, i1, i2))
            out += map(add, repeat("+"), _originals(b, j1, j2))
        return out


def _originals(text: NormalizedText, start: int, end: int) -> list[str]:
    """The original lines of kept lines [start, end)."""
    if start >= end:
        return []
    first, last = text.origin[start], text.origin[end - 1]
    if last - first == end - start - 1:
        return text.original[first:last + 1]
    return list(map(text.original.__getitem__, text.origin[start:end]))


@dataclass
class IRDiff:
    a: NormalizedText
    b: NormalizedText
    opcodes: list[Opcode]
    # (section in a, section in b) that correspond; section 0 (module level) always does
    section_pairs: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])

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
    """Diff two normalized texts (see `_diff`), with the cyclic GC paused (`gc_paused`)."""
    with gc_paused():
        return _diff(a, b)


def _diff(a: NormalizedText, b: NormalizedText) -> IRDiff:
    """Pair lines in three rounds, each only in the gaps the previous one left: lines equal as
    printed, lines equal once noise is stripped, lines with equal keys; then drop pairs whose
    names do not correspond (`workbench.diff.names`).

    Computations/functions are paired first (`pair_sections`); a pair printed identically is
    matched whole, and the lines of the others are only paired inside their pair (module-level
    lines: between the same pairs). Most lines of a pass diff are equal as printed, so
    stripping and key making only touch the few that are not. Texts of equal length that are
    equal modulo normalization line by line are equal (the same judgement as `same_ir`,
    whatever the rounds would pair).
    """
    raw_a, raw_b = a.raw, b.raw
    if raw_a == raw_b or (len(raw_a) == len(raw_b) and _same_by_position(a, b)):
        blocks: list[Block] = [(0, 0, len(raw_a))] if raw_a else []
        pairs = [(k, k) for k in range(len(a.sections))] \
            if len(a.sections) == len(b.sections) else [(0, 0)]
        return IRDiff(a, b, _opcodes(blocks, len(raw_a), len(raw_b)), pairs)
    section_pairs = pair_sections(a, b)
    blocks = identical_sections(a, b, section_pairs)
    anchors = _anchors(a, b, section_pairs, blocks)
    stripping = a.strip_function is not None or b.strip_function is not None
    keying = a.key_function is not None and b.key_function is not None
    # MLIR numbers values in print order: after an inserted op, a line equal as printed is
    # as likely another op's as its own, so pairing such lines first would misalign what
    # follows. HLO names are the instructions' own: equal lines are the same instruction.
    positional = keying and a.kind == "mlir"
    if not positional:
        gaps = _opengaps_between(blocks + anchors, len(raw_a), len(raw_b))
        blocks = merge_blocks(sorted(blocks + matching_blocks_in(
            raw_a, raw_b, gaps, exhaustive=not stripping and not keying)))
    renamed: list[Block] = []
    if stripping or keying:
        blocks, renamed = _normalized_rounds(a, b, blocks, anchors, not positional)
    blocks = merge_blocks(sorted(blocks + renamed))
    if renamed and a.kind == b.kind:
        blocks = check_names(a, b, blocks, renamed)
    return IRDiff(a, b, _opcodes(blocks, len(raw_a), len(raw_b)), section_pairs)


def _anchors(a: NormalizedText, b: NormalizedText, pairs: list[tuple[int, int]],
             blocks: list[Block]) -> list[Block]:
    """Zero-length blocks at the first line and after the last line of every section pair
    not matched whole: no line is paired across them. Header anchors only when the ends do
    not line up (sections paired across their nesting), none when even those do not."""
    starts = [i for i, _, _ in blocks]
    heads: list[Block] = []
    ends: list[Block] = []
    for x, y in pairs:
        section_a, section_b = a.sections[x], b.sections[y]
        if not x or section_a.header is None or section_b.header is None:
            continue
        k = bisect_right(starts, section_a.header) - 1
        if k >= 0 and section_a.header < starts[k] + blocks[k][2]:
            continue  # inside a section matched whole
        heads.append((section_a.header, section_b.header, 0))
        ends.append((section_a.span[1], section_b.span[1], 0))
    for anchors in (heads + ends, heads):
        if _monotone(sorted(blocks + anchors)):
            return sorted(anchors)
    return []


def _monotone(items: list[Block]) -> bool:
    """True when sorted blocks also increase (without overlapping) on side b."""
    return all(items[k][1] + items[k][2] <= items[k + 1][1] for k in range(len(items) - 1))


def _opengaps_between(items: list[Block], len_a: int, len_b: int) -> list[Gap]:
    """Gaps between the items that have lines on both sides."""
    return [gap for gap in gaps_between(sorted(items), len_a, len_b)
            if gap[0] < gap[1] and gap[2] < gap[3]]


def _normalized_rounds(a: NormalizedText, b: NormalizedText, blocks: list[Block],
                       anchors: list[Block], stripped_round: bool = True
                       ) -> tuple[list[Block], list[Block]]:
    """Rounds two and three: stripped lines, then keys, in what is still unpaired. Lines that
    no line across their gap shares a signature with (`NormalizedText.signature_function`)
    cannot pair in either round: they are neither stripped nor keyed, and gaps without a line
    that may pair on both sides are left as they are."""
    gaps = _opengaps_between(blocks + anchors, len(a.raw), len(b.raw))
    if not gaps:
        return blocks, []
    pairable = _pairable(a, b, gaps)
    picked_a = picked_b = None
    if pairable is not None:
        gaps, picked_a, picked_b = _pairable_gaps(gaps, *pairable)
        if not gaps:
            return blocks, []
    stripped_a = _gap_lines(a.raw, gaps, 0, a.strip, picked_a)
    stripped_b = _gap_lines(b.raw, gaps, 2, b.strip, picked_b)
    same = blocks
    if stripped_round and (a.strip_function is not None or b.strip_function is not None):
        same = blocks + matching_blocks_in(stripped_a, stripped_b, gaps,
                                           exhaustive=a.key_function is None
                                           or b.key_function is None)
        gaps = _opengaps_between(same + anchors, len(a.raw), len(b.raw))
        if pairable is not None:
            gaps, picked_a, picked_b = _pairable_gaps(gaps, *pairable)
    if a.key_function is None or b.key_function is None or not gaps:
        return same, []
    keys_a = _gap_lines(stripped_a, gaps, 0, a.key, picked_a)
    keys_b = _gap_lines(stripped_b, gaps, 2, b.key, picked_b)
    return same, matching_blocks_in(keys_a, keys_b, gaps)


def _pairable(a: NormalizedText, b: NormalizedText, gaps: list[Gap]
              ) -> tuple[list[int], list[int]] | None:
    """The lines inside the gaps that may pair (sorted, per side): those whose signature some
    line on the other side of their gap has, all of a gap's where a signature is unknown.
    None when the texts have no signatures."""
    signature = a.signature_function
    if signature is None or signature is not b.signature_function:
        return None
    signatures_a = signature(_picked_lines(a.raw, gaps, 0))
    signatures_b = signature(_picked_lines(b.raw, gaps, 2))
    picked_a: list[int] = []
    picked_b: list[int] = []
    position_a = position_b = 0
    for alo, ahi, blo, bhi in gaps:
        here_a = signatures_a[position_a:position_a + ahi - alo]
        here_b = signatures_b[position_b:position_b + bhi - blo]
        position_a += ahi - alo
        position_b += bhi - blo
        known_a, known_b = set(here_a), set(here_b)
        if None in known_a or None in known_b:
            picked_a += range(alo, ahi)
            picked_b += range(blo, bhi)
            continue
        picked_a += compress(range(alo, ahi), map(known_b.__contains__, here_a))
        picked_b += compress(range(blo, bhi), map(known_a.__contains__, here_b))
    return picked_a, picked_b


def _pairable_gaps(gaps: list[Gap], pairable_a: list[int], pairable_b: list[int]
                   ) -> tuple[list[Gap], list[int], list[int]]:
    """The gaps that hold lines that may pair on both sides, and those lines (per side; the
    `pairable` line lists are sorted)."""
    kept: list[Gap] = []
    picked_a: list[int] = []
    picked_b: list[int] = []
    for gap in gaps:
        here_a = pairable_a[bisect_left(pairable_a, gap[0]):bisect_left(pairable_a, gap[1])]
        here_b = pairable_b[bisect_left(pairable_b, gap[2]):bisect_left(pairable_b, gap[3])]
        if here_a and here_b:
            kept.append(gap)
            picked_a += here_a
            picked_b += here_b
    return kept, picked_a, picked_b


def _picked_lines(lines: Sequence[str | None], gaps: list[Gap], side: int) -> list[str]:
    picked: list[str] = []
    for gap in gaps:
        picked += lines[gap[side]:gap[side + 1]]  # type: ignore[arg-type]  # text in the gaps
    return picked


def _gap_lines(lines: Sequence[Hashable], gaps: list[Gap], side: int,
               transform: Callable[[list[str]], list[str]], picked: list[int] | None = None
               ) -> list[Hashable]:
    """`transform` applied, in one call, to the lines inside the gaps (only to those
    `picked`, when given); the result is as long as `lines`, with None outside the gaps (never
    looked at: matching stays in the gaps).

    A line inside the gaps that is not picked gets a value equal to no other line's, on
    either side: its index on side a, minus one minus its index on side b.
    """
    out: list[Hashable] = [None] * len(lines)
    if picked is None:
        # `lines` holds text inside the gaps: the raw lines, or what an earlier pass made.
        done = transform(_picked_lines(lines, gaps, side))  # type: ignore[arg-type]  # text there
        position = 0
        for gap in gaps:
            start, end = gap[side], gap[side + 1]
            out[start:end] = done[position:position + end - start]
            position += end - start
        return out
    for gap in gaps:
        start, end = gap[side], gap[side + 1]
        out[start:end] = range(start, end) if side == 0 else range(-1 - start, -1 - end, -1)
    done = transform([lines[k] for k in picked])  # type: ignore[misc]  # text, as above
    for k, value in zip(picked, done, strict=True):
        out[k] = value
    return out


def _same_by_position(a: NormalizedText, b: NormalizedText) -> bool:
    """Line k of a equals line k of b modulo normalization, for every k (equal lengths)."""
    differ = list(compress(range(len(a.raw)), map(ne, a.raw, b.raw)))
    lines_a = a.strip([a.raw[k] for k in differ])
    lines_b = b.strip([b.raw[k] for k in differ])
    renamed = [k for k, x, y in zip(differ, lines_a, lines_b, strict=True) if x != y]
    if not renamed:
        return True
    if a.key_function is None or b.key_function is None or a.kind != b.kind:
        return False
    positions = {k: n for n, k in enumerate(differ)}
    keys_a = a.key([lines_a[positions[k]] for k in renamed])
    keys_b = b.key([lines_b[positions[k]] for k in renamed])
    if keys_a != keys_b:
        return False
    whole = [(0, 0, len(a.raw))]
    return check_names(a, b, whole, [(k, k, 1) for k in renamed]) == whole


def same_ir(a: NormalizedText, b: NormalizedText) -> bool:
    """True when the two texts are equal modulo normalization (no diff is computed)."""
    if a.raw == b.raw:
        return True
    return len(a.raw) == len(b.raw) and _same_by_position(a, b)


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
    _, i1, _, j1, _ = group[0]
    i2, j2 = group[-1][2], group[-1][4]
    first_change = next(op for op in group if op[0] != "equal")
    if first_change[3] < first_change[4]:
        section = b.sections[b.section_of(first_change[3])].name
    else:
        section = a.sections[a.section_of(first_change[1])].name
    a_start = a.origin[i1] if i1 < len(a.origin) else len(a.original)
    b_start = b.origin[j1] if j1 < len(b.origin) else len(b.original)
    a_count = a.origin[i2 - 1] - a_start + 1 if i2 > i1 else 0
    b_count = b.origin[j2 - 1] - b_start + 1 if j2 > j1 else 0
    return Hunk(a_start, a_count, b_start, b_count, section, group, a, b)


def summarize_sections(diff: IRDiff) -> list[SectionChange]:
    """Count changed lines per computation/function, through the section pairs."""
    a, b = diff.a, diff.b
    partner_of_a = dict(diff.section_pairs)
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

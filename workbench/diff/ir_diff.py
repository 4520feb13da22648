"""Diff two normalized IR texts: paired lines, hunks for navigation, per-section summary.

Positions in `IRDiff.opcodes` index the normalized lines; `NormalizedText.origin` maps them
back to the original lines, which is what every view shows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import ne
from typing import Literal

from workbench.diff.line_diff import (
    Block,
    Gap,
    heaviest_chain,
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
    """Pair lines in three rounds, each only in the gaps the previous one left: lines equal as
    printed, lines equal once noise is stripped, lines with equal keys; then drop pairs whose
    names do not correspond (`workbench.diff.names`). Computations/functions are paired first
    by their headers, and no line is paired across such a pair.

    Most lines of a pass diff are equal as printed, so stripping and key making only touch
    the few that are not. Texts of equal length that are equal modulo normalization line by
    line are equal (the same judgement as `same_ir`, whatever the rounds would pair).
    """
    raw_a, raw_b = a.raw, b.raw
    if raw_a == raw_b or (len(raw_a) == len(raw_b) and _same_by_position(a, b)):
        blocks: list[Block] = [(0, 0, len(raw_a))] if raw_a else []
        pairs = [(k, k) for k in range(len(a.sections))] \
            if len(a.sections) == len(b.sections) else [(0, 0)]
        return IRDiff(a, b, _opcodes(blocks, len(raw_a), len(raw_b)), pairs)
    blocks = identical_sections(a, b)
    gaps = [gap for gap in _gaps(blocks, len(raw_a), len(raw_b))
            if gap[0] < gap[1] and gap[2] < gap[3]]
    blocks = merge_blocks(sorted(blocks + matching_blocks_in(raw_a, raw_b, gaps)))
    section_pairs, anchors = pair_sections(a, b, blocks)
    if not _consistent(blocks, anchors):
        # Rare: redo round one inside the gaps between every pair of headers.
        anchors = sorted((a.sections[x].header, b.sections[y].header, 0)  # type: ignore[misc]
                         for x, y in section_pairs if x)
        blocks = matching_blocks_in(raw_a, raw_b, _gaps(anchors, len(raw_a), len(raw_b)))
    renamed: list[Block] = []
    if a.strip_function is not None or b.strip_function is not None \
            or a.key_function is not None:
        blocks, renamed = _normalized_rounds(a, b, blocks, anchors)
    blocks = merge_blocks(sorted(blocks + renamed))
    if renamed and a.kind == b.kind:
        blocks = check_names(a, b, blocks, renamed)
    return IRDiff(a, b, _opcodes(blocks, len(raw_a), len(raw_b)), section_pairs)


def identical_sections(a: NormalizedText, b: NormalizedText) -> list[Block]:
    """Computations/functions printed identically on both sides (same header, same lines), as
    blocks, each with the blank lines after it when those are equal too: a pass usually
    touches few of them, so the line diff only sees the others.

    The n-th section with a given header line on one side goes with the n-th on the other;
    sections nested in one already taken are skipped, and the blocks kept are the heaviest
    chain that increases on both sides.
    """
    raw_a, raw_b = a.raw, b.raw
    heads_a = [raw_a[s.header] for s in a.sections[1:]]  # type: ignore[index]
    heads_b = [raw_b[s.header] for s in b.sections[1:]]  # type: ignore[index]
    partner_of = dict(zip(heads_b, b.sections[1:], strict=True))
    if len(partner_of) == len(heads_b) and len(set(heads_a)) == len(heads_a):
        partners = list(map(partner_of.get, heads_a))
    else:  # repeated headers: the n-th goes with the n-th
        numbered_b = _numbered(heads_b)
        partner_by_number = dict(zip(numbered_b, b.sections[1:], strict=True))
        partners = list(map(partner_by_number.get, _numbered(heads_a)))
    found: list[Block] = []
    taken_until = -1
    len_a, len_b = len(raw_a), len(raw_b)
    for section, partner in zip(a.sections[1:], partners, strict=True):
        if partner is None:
            continue
        start, end = section.header, section.end
        other, other_end = partner.header, partner.end
        if start < taken_until or other_end - other != end - start:  # type: ignore[operator]
            continue
        if raw_a[start:end] == raw_b[other:other_end]:
            while end < len_a and other_end < len_b and raw_a[end] == raw_b[other_end] == "":
                end += 1
                other_end += 1
            found.append((start, other, end - start))  # type: ignore[arg-type]
            taken_until = end  # type: ignore[assignment]
    starts_b = [j for _, j, _ in found]
    if starts_b != sorted(starts_b):
        found.sort(key=lambda block: block[1])
        disjoint: list[Block] = []
        for block in found:
            if not disjoint or block[1] >= disjoint[-1][1] + disjoint[-1][2]:
                disjoint.append(block)
        disjoint.sort()
        found = heaviest_chain(disjoint)
    return merge_blocks(found)


def _normalized_rounds(a: NormalizedText, b: NormalizedText, blocks: list[Block],
                       anchors: list[tuple[int, int, int]]
                       ) -> tuple[list[Block], list[Block]]:
    """Rounds two and three: stripped lines, then keys, in what is still unpaired."""
    gaps = _gaps(sorted(blocks + anchors), len(a.raw), len(b.raw))
    gaps = [gap for gap in gaps if gap[0] < gap[1] and gap[2] < gap[3]]
    if not gaps:
        return blocks, []
    stripped_a = _gap_lines(a.raw, gaps, 0, a.strip)
    stripped_b = _gap_lines(b.raw, gaps, 2, b.strip)
    same = blocks
    if a.strip_function is not None or b.strip_function is not None:
        same = blocks + matching_blocks_in(stripped_a, stripped_b, gaps)
        gaps = _gaps(sorted(same + anchors), len(a.raw), len(b.raw))
        gaps = [gap for gap in gaps if gap[0] < gap[1] and gap[2] < gap[3]]
    if a.key_function is None or b.key_function is None or not gaps:
        return same, []
    keys_a = _gap_lines(stripped_a, gaps, 0, a.key)
    keys_b = _gap_lines(stripped_b, gaps, 2, b.key)
    return same, matching_blocks_in(keys_a, keys_b, gaps)


def _gap_lines(lines: Sequence[str | None], gaps: list[Gap], side: int,
               transform: Callable[[list[str]], list[str]]) -> list[str | None]:
    """`transform` applied, in one call, to the lines inside the gaps; the result is as long
    as `lines`, with None outside the gaps (never looked at: matching stays in the gaps)."""
    picked: list[str] = []
    for gap in gaps:
        picked += lines[gap[side]:gap[side + 1]]  # type: ignore[arg-type]
    done = transform(picked)
    out: list[str | None] = [None] * len(lines)
    position = 0
    for gap in gaps:
        start, end = gap[side], gap[side + 1]
        out[start:end] = done[position:position + end - start]
        position += end - start
    return out


def _gaps(items: list[Block], len_a: int, len_b: int) -> list[Gap]:
    """The unpaired stretches between sorted blocks (a zero-length block only splits)."""
    gaps: list[Gap] = []
    i = j = 0
    for bi, bj, n in items:
        if i < bi or j < bj:
            gaps.append((i, bi, j, bj))
        i, j = bi + n, bj + n
    if i < len_a or j < len_b:
        gaps.append((i, len_a, j, len_b))
    return gaps


def _consistent(blocks: list[Block], anchors: list[tuple[int, int, int]]) -> bool:
    """True when no block pairs lines across an anchor (lines before it in a with lines after
    it in b, or the other way round)."""
    if not anchors:
        return True
    starts = [i for i, _, _ in blocks]
    for ha, hb, _ in anchors:
        k = bisect_right(starts, ha) - 1
        if k >= 0:
            i, j, n = blocks[k]
            if ha < i + n or j + n > hb:
                return False
        if k + 1 < len(blocks) and blocks[k + 1][1] <= hb:
            return False
    return True


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


def pair_sections(a: NormalizedText, b: NormalizedText, blocks: list[Block]
                  ) -> tuple[list[tuple[int, int]], list[tuple[int, int, int]]]:
    """Which computations/functions correspond: (section pairs, anchors).

    Headers paired by `blocks` (equal as printed) correspond. Between two such pairs, the
    headers left over are paired by name and position: first equal names (a computation
    whose signature changed), then equal keys (renumbered), then equal name stems; each
    time the n-th occurrence of a name on one side goes with the n-th on the other, in
    order. Those extra pairs are returned as anchors (`(line in a, line in b, 0)`): no line
    may be paired across them.
    """
    heads_a = [(s.header, k) for k, s in enumerate(a.sections) if s.header is not None]
    heads_b = [(s.header, k) for k, s in enumerate(b.sections) if s.header is not None]
    pairs: list[tuple[int, int]] = [(0, 0)]
    anchors: list[tuple[int, int, int]] = []
    lines_a = [h for h, _ in heads_a]
    position_b = {h: n for n, (h, _) in enumerate(heads_b)}
    matched: list[tuple[int, int]] = []  # (index into heads_a, index into heads_b)
    for i, j, n in blocks:  # headers paired as equal lines
        for x in range(bisect_left(lines_a, i), bisect_left(lines_a, i + n)):
            y = position_b.get(j + lines_a[x] - i)
            if y is not None:
                matched.append((x, y))
    previous = (-1, -1)
    for x, y in [*matched, (len(heads_a), len(heads_b))]:
        if x > previous[0] + 1 and y > previous[1] + 1:
            for u, v in _pair_leftovers(a, b, heads_a[previous[0] + 1:x],
                                        heads_b[previous[1] + 1:y]):
                pairs.append((u[1], v[1]))
                anchors.append((u[0], v[0], 0))
        if x < len(heads_a):
            pairs.append((heads_a[x][1], heads_b[y][1]))
        previous = (x, y)
    pairs.sort()
    return pairs, anchors


def _pair_leftovers(a: NormalizedText, b: NormalizedText, heads_a: list[tuple[int, int]],
                    heads_b: list[tuple[int, int]]
                    ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Headers of one gap paired by name, then key, then stem (see `pair_sections`)."""
    names_a = [_qualified_name(a, k) for _, k in heads_a]
    names_b = [_qualified_name(b, k) for _, k in heads_b]
    keys_a = a.key(a.strip([a.raw[h] for h, _ in heads_a]))
    keys_b = b.key(b.strip([b.raw[h] for h, _ in heads_b]))
    stems_a = [_header_stem(key) for key in keys_a]
    stems_b = [_header_stem(key) for key in keys_b]
    found: list[tuple[int, int]] = []
    gaps: list[Gap] = [(0, len(heads_a), 0, len(heads_b))]
    for side_a, side_b in ((names_a, names_b), (keys_a, keys_b), (stems_a, stems_b)):
        numbered_a = _numbered(side_a)
        numbered_b = _numbered(side_b)
        for x, y, n in matching_blocks_in(numbered_a, numbered_b, gaps):
            found.extend((x + k, y + k) for k in range(n))
        found.sort()
        gaps = [gap for gap in _gaps([(x, y, 1) for x, y in found], len(heads_a), len(heads_b))
                if gap[0] < gap[1] and gap[2] < gap[3]]
    return [(heads_a[x], heads_b[y]) for x, y in found]


def _numbered(names: list[str]) -> list[tuple[str, int]]:
    """Each name with its occurrence number: the n-th `x` pairs only with the n-th `x`."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append((name, count))
    return out


def _qualified_name(text: NormalizedText, index: int) -> str:
    """A section's name with the names of the sections it is nested in (MLIR executables
    all have a variant `@embedded_elf_x86_64`)."""
    section = text.sections[index]
    names = [section.name]
    for outer in reversed(text.sections[1:index]):
        if outer.end is not None and outer.header is not None \
                and outer.header < section.header < outer.end:  # type: ignore[operator]
            names.append(outer.name)
            section = outer
    return "/".join(reversed(names))


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
        section = b.sections[b.section_of(first_change[3])].name
    else:
        section = a.sections[a.section_of(first_change[1])].name
    a_start = a.origin[i1] if i1 < len(a.origin) else len(a.original)
    b_start = b.origin[j1] if j1 < len(b.origin) else len(b.original)
    a_count = a.origin[i2 - 1] - a_start + 1 if i2 > i1 else 0
    b_count = b.origin[j2 - 1] - b_start + 1 if j2 > j1 else 0
    return Hunk(a_start, a_count, b_start, b_count, section, lines)


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

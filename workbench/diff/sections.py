"""Which computations/functions of two IR texts correspond, and which are printed identically.

Sections are paired before lines: a pass diff is read computation by computation, and pairing
them first keeps lines from being paired across computations. Most computations of a pass
diff are printed identically on both sides; finding those whole (a few list comparisons) leaves
the line diff only the others.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import pairwise
from operator import add, itemgetter

from workbench.diff.line_diff import (
    Block,
    Gap,
    gaps_between,
    matching_blocks,
    matching_blocks_in,
    merge_blocks,
)
from workbench.diff.normalize import NormalizedText


def pair_sections(a: NormalizedText, b: NormalizedText) -> list[tuple[int, int]]:
    """Which computations/functions correspond, as (section in a, section in b), in order on
    both sides; section 0 (module level) always pairs with section 0.

    Headers printed identically correspond: a header names its section, and nested sections
    (MLIR) are told apart by the names of the sections around them (every executable has a
    variant `@embedded_elf_x86_64`); a header repeated even so goes with the n-th of its kind
    on the other side, kept in order on both sides. Between two such pairs, the headers left
    over are paired by name and position: first equal names (a computation whose signature
    changed), then equal keys (renumbered), then equal name stems; each time the n-th
    occurrence on one side goes with the n-th on the other, in order.
    """
    heads_a = [(s.header, k) for k, s in enumerate(a.sections) if s.header is not None]
    heads_b = [(s.header, k) for k, s in enumerate(b.sections) if s.header is not None]
    pairs: list[tuple[int, int]] = [(0, 0)]
    lines_a = list(map(a.raw.__getitem__, map(itemgetter(0), heads_a)))
    lines_b = list(map(b.raw.__getitem__, map(itemgetter(0), heads_b)))
    keys_a: Sequence[Hashable] = lines_a
    keys_b: Sequence[Hashable] = lines_b
    if len(set(lines_a)) < len(lines_a) or len(set(lines_b)) < len(lines_b):
        keys_a = _numbered(list(map(add, outer_names(a)[1:], lines_a)))
        keys_b = _numbered(list(map(add, outer_names(b)[1:], lines_b)))
    # Every section but the first has a header: heads_a[x] is section x + 1.
    next_x = next_y = 0
    for x, y, n in [*matching_blocks(keys_a, keys_b), (len(heads_a), len(heads_b), 0)]:
        if x > next_x and y > next_y:
            pairs += [(u[1], v[1]) for u, v in _pair_leftovers(a, b, heads_a[next_x:x],
                                                                heads_b[next_y:y])]
        pairs += zip(range(x + 1, x + n + 1), range(y + 1, y + n + 1), strict=True)
        next_x, next_y = x + n, y + n
    return pairs


def _pair_leftovers(a: NormalizedText, b: NormalizedText, heads_a: list[tuple[int, int]],
                    heads_b: list[tuple[int, int]]
                    ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Headers of one gap paired by name, then key, then stem (see `pair_sections`)."""
    outer_a, outer_b = outer_names(a), outer_names(b)
    names_a = [outer_a[k] + a.sections[k].name for _, k in heads_a]
    names_b = [outer_b[k] + b.sections[k].name for _, k in heads_b]
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
        paired = [(x, y, 1) for x, y in found]
        gaps = [gap for gap in gaps_between(paired, len(heads_a), len(heads_b))
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


def outer_names(text: NormalizedText) -> list[str]:
    """For each section, the names of the sections it is nested in (`a/b/`; "" at the top)."""
    out = [""]
    stack: list[tuple[int, str]] = []  # (end, prefix for what is nested in it)
    for section in text.sections[1:]:
        assert section.header is not None and section.end is not None
        while stack and stack[-1][0] <= section.header:
            stack.pop()
        prefix = stack[-1][1] if stack else ""
        out.append(prefix)
        stack.append((section.end, f"{prefix}{section.name}/"))
    return out


def _header_stem(key: str) -> str:
    """`ENTRY %main (x: ...) -> ... {` -> `ENTRY %main`; `func.func @f(...` -> `func.func @f`."""
    at = key.find("@")
    if at >= 0:
        end = at + 1
        while end < len(key) and (key[end].isalnum() or key[end] in "_$.-"):
            end += 1
        return key[:end]
    return key.split(" (", 1)[0]


def identical_sections(a: NormalizedText, b: NormalizedText,
                       pairs: list[tuple[int, int]]) -> list[Block]:
    """The section pairs printed identically (same header, same lines), as blocks, each with
    the blank lines after it when those are equal too: a pass usually touches few
    computations, so the line diff only sees the others. Sections nested in one already
    taken are skipped.

    Without nesting (HLO), runs of pairs that follow each other on both sides are compared
    whole first, and halved only when they differ: a few list comparisons (C) instead of one
    per computation.
    """
    found: list[Block] = []
    if _flat(a) and _flat(b):
        run_start = 1
        for run_end in range(2, len(pairs) + 1):
            if run_end == len(pairs) or pairs[run_end][0] != pairs[run_end - 1][0] + 1 \
                    or pairs[run_end][1] != pairs[run_end - 1][1] + 1:
                _identical_runs(a, b, pairs[run_start][0], pairs[run_start][1],
                                run_end - run_start, found)
                run_start = run_end
        return merge_blocks(found)
    raw_a, raw_b = a.raw, b.raw
    taken_until = -1
    for x, y in pairs[1:]:
        start, end = a.sections[x].header, a.sections[x].end
        other, other_end = b.sections[y].header, b.sections[y].end
        assert start is not None and end is not None
        assert other is not None and other_end is not None
        if start < taken_until or other_end - other != end - start \
                or raw_a[start:end] != raw_b[other:other_end]:
            continue
        found.append(_with_blank_lines(a, b, start, other, end - start))
        taken_until = found[-1][0] + found[-1][2]
    return merge_blocks(found)


def _flat(text: NormalizedText) -> bool:
    """True when no section is nested in another."""
    spans = [s.span for s in text.sections[1:]]
    return all(end <= head for (_, end), (head, _) in pairwise(spans))


def _identical_runs(a: NormalizedText, b: NormalizedText, x: int, y: int, count: int,
                    found: list[Block]) -> None:
    """Blocks for the identical sections among sections x.. of a and y.. of b (`count` of
    them, paired in order): the whole run when it is identical, else each half."""
    start, end = a.sections[x].header, a.sections[x + count - 1].end
    other, other_end = b.sections[y].header, b.sections[y + count - 1].end
    assert start is not None and end is not None and other is not None and other_end is not None
    if end - start == other_end - other and a.raw[start:end] == b.raw[other:other_end]:
        found.append(_with_blank_lines(a, b, start, other, end - start))
    elif count > 1:
        half = count // 2
        _identical_runs(a, b, x, y, half, found)
        _identical_runs(a, b, x + half, y + half, count - half, found)


def _with_blank_lines(a: NormalizedText, b: NormalizedText, i: int, j: int, n: int) -> Block:
    """The block extended over the blank lines after it that both sides have."""
    raw_a, raw_b = a.raw, b.raw
    while i + n < len(raw_a) and j + n < len(raw_b) and raw_a[i + n] == raw_b[j + n] == "":
        n += 1
    return i, j, n

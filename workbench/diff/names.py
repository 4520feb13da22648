"""The name check: paired lines must use corresponding names, one to one.

Lines are paired on their keys, where every name is cut to its stem; that alone would call
`subtract(%sub.14, %sub.15)` and `subtract(%sub.15, %sub.14)` equal. This module restores the
information: over all paired lines, the name printed on one side must always go with the same
name on the other (a bijection, built as definitions are met). A paired line that breaks it is
a real change (rewired operands, swapped call targets) and is unpaired.

Lines paired because they are equal (as printed or once stripped) pair every name with
itself, so only the names that a key-paired line pairs with another name can conflict. Those
are found from the key-paired lines alone; when there are none the check is over. Otherwise
the lines of the section that hold one of them go through the ordered check, name by name,
where a definition rebinds a name (names are reused across computations, functions and sibling
regions) and a use must agree with the current binding; names that always go with themselves
can neither break a line nor change another name's binding, so leaving them out gives the same
answer as checking every name of every line. When a section renames very many names (a
renumbering), its names are all read instead and a bijection test over the set of pairs rules
the common case out in a few C-level operations. Names are read from the stripped lines
(noise such as metadata holds none).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from itertools import accumulate, repeat
from operator import add, itemgetter

from workbench.diff.line_diff import Block
from workbench.diff.normalize import NormalizedText

_TOKENS = {
    "hlo": re.compile(r"%[\w.\-]+"),
    "mlir": re.compile(r"[%^][\w$.\-]+"),
}
_MLIR_DEFINED_BEFORE = re.compile(r"\s*((?:%[\w$.\-]+(?::\d+)?(?:, )?)+) = ")
_HLO_DEFINED = re.compile(r"\s*(?:ROOT )?%[\w.\-]+ = |(?:ENTRY )?%[\w.\-]+ ")
# Searching the lines of a section for the renamed names (a compiled alternation) beats
# reading all its names only for a big section and a few names.
_FEW_NAMES = 32
_MANY_LINES = 400

Chunk = tuple[int, int, int, int]  # (section of a, start in a, start in b, length)


def check_names(a: NormalizedText, b: NormalizedText, blocks: list[Block],
                renamed: list[Block]) -> list[Block]:
    """`blocks` without the paired lines whose names do not correspond.

    `renamed` are the blocks paired on keys (the others pair lines equal as printed or once
    stripped). Only sections holding some of them are checked. Computation names (HLO) cross
    sections and are checked over the whole module when some were renamed.
    """
    token = _TOKENS.get(a.kind)
    if token is None or not a.options.names or not blocks or not renamed:
        return blocks
    findall = token.findall
    starts = a.section_starts
    renamed_by_section: dict[int, list[Block]] = {}
    for section, i, j, n in _chunks_by_section(a, renamed, starts):
        renamed_by_section.setdefault(section, []).append((i, j, n))

    broken: set[int] = set()  # a-indices of pairs that fail the check
    moved: set[tuple[str, str]] = set()  # (a-name, b-name) pairs of different names
    block_starts = [i for i, _, _ in blocks]
    for section, chunks in renamed_by_section.items():
        lines_a = a.strip([line for i, _, n in chunks for line in a.raw[i:i + n]])
        lines_b = b.strip([line for _, j, n in chunks for line in b.raw[j:j + n]])
        tokens_a = findall("\n".join(lines_a))
        tokens_b = findall("\n".join(lines_b))
        if len(tokens_a) == len(tokens_b):
            here = set(zip(tokens_a, tokens_b, strict=True))
        else:
            here = set()
            indices = [k for i, _, n in chunks for k in range(i, i + n)]
            for index, found_a, found_b in zip(indices, map(findall, lines_a),
                                               map(findall, lines_b), strict=True):
                if len(found_a) != len(found_b):
                    broken.add(index)
                else:
                    here.update(zip(found_a, found_b, strict=True))
        here = {(x, y) for x, y in here if x != y}
        if not here:
            continue
        moved |= here
        within = _within(a, blocks, block_starts, section)
        paired = [(i, j, n) for s, i, j, n in _chunks_by_section(a, within, starts)
                  if s == section]
        names = {x for x, _ in here} | {y for _, y in here}
        if len(names) <= _FEW_NAMES and sum(n for *_, n in paired) >= _MANY_LINES:
            # A big section (an entry computation) with a few renamed names: only the lines
            # naming them are read.
            rows = _rows_holding(a, b, paired, names, token)
            broken |= _ordered_check(a.kind, rows, token, names)
        else:
            broken |= _check_section(a, b, paired, token)

    if a.kind == "hlo" and moved:
        broken |= _check_computation_names(a, b, blocks, moved, token)
    if not broken:
        return blocks
    return _remove_pairs(blocks, broken)


def _rows_holding(a: NormalizedText, b: NormalizedText, paired: list[Block], names: set[str],
                  token: re.Pattern[str]) -> list[tuple[int, str, str]]:
    """The paired lines (a-index, stripped a line, stripped b line) in which one of `names`
    occurs on either side, in order."""
    raw_a = [line for i, _, n in paired for line in a.raw[i:i + n]]
    raw_b = [line for _, j, n in paired for line in b.raw[j:j + n]]
    holding = sorted(_lines_holding(raw_a, names, token, a.names_in_raw)
                     | _lines_holding(raw_b, names, token, b.names_in_raw))
    indices = [k for i, _, n in paired for k in range(i, i + n)]
    lines_a = a.strip([raw_a[k] for k in holding])
    lines_b = b.strip([raw_b[k] for k in holding])
    return list(zip([indices[k] for k in holding], lines_a, lines_b, strict=True))


def _lines_holding(lines: list[str], names: set[str], token: re.Pattern[str],
                   sigils: bool = True) -> set[int]:
    """Positions in `lines` of the lines where one of `names` may occur (a superset when the
    lines print names without their sigil)."""
    if not names:
        return set()
    if len(names) > _FEW_NAMES or len(lines) < _MANY_LINES:
        # Reading every line's names beats compiling and running an alternation then.
        return {k for k, found in enumerate(map(token.findall, lines))
                if not names.isdisjoint(found)}
    words = names if sigils else {name[1:] for name in names}
    pattern = re.compile("(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
                         + r")(?![\w$.\-])")
    starts = list(accumulate(map(add, map(len, lines), repeat(1)), initial=0))
    return {bisect_right(starts, match.start()) - 1
            for match in pattern.finditer("\n".join(lines))}


def _check_section(a: NormalizedText, b: NormalizedText, paired: list[Block],
                   token: re.Pattern[str]) -> set[int]:
    """Every name of a section's paired lines: a bijection test over the set of pairs, then
    the ordered check on the lines holding a name with more than one partner."""
    findall = token.findall
    lines_a = a.strip([line for i, _, n in paired for line in a.raw[i:i + n]])
    lines_b = b.strip([line for _, j, n in paired for line in b.raw[j:j + n]])
    indices = [k for i, _, n in paired for k in range(i, i + n)]
    tokens_a = findall("\n".join(lines_a))
    tokens_b = findall("\n".join(lines_b))
    broken: set[int] = set()
    if len(tokens_a) == len(tokens_b):
        pairs = set(zip(tokens_a, tokens_b, strict=True))
        if len(pairs) == len(set(tokens_a)) == len(set(tokens_b)):
            return broken
    else:
        pairs = set()
        for index, found_a, found_b in zip(indices, map(findall, lines_a), map(findall, lines_b),
                                           strict=True):
            if len(found_a) != len(found_b):
                broken.add(index)
            else:
                pairs.update(zip(found_a, found_b, strict=True))
    conflicted_a = {x for x, count in Counter(map(itemgetter(0), pairs)).items() if count > 1}
    conflicted_b = {y for y, count in Counter(map(itemgetter(1), pairs)).items() if count > 1}
    if not conflicted_a and not conflicted_b:
        return broken
    holding = _lines_holding(lines_a, conflicted_a, token) \
        | _lines_holding(lines_b, conflicted_b, token)
    rows = [(indices[k], lines_a[k], lines_b[k]) for k in sorted(holding)
            if indices[k] not in broken]
    return broken | _ordered_check(a.kind, rows, token, conflicted_a | conflicted_b)


def _check_computation_names(a: NormalizedText, b: NormalizedText, blocks: list[Block],
                             moved: set[tuple[str, str]], token: re.Pattern[str]) -> set[int]:
    """Computation names are defined once (their header) and used from other computations
    (`calls=`, `to_apply=`): a renamed one is checked over every paired line of the module
    that names it."""
    computations_a, computations_b = a.section_names, b.section_names
    renamed = [(x, y) for x, y in moved if x in computations_a or y in computations_b]
    if not renamed:
        return set()
    names = {x for x, _ in renamed} | {y for _, y in renamed}
    rows = _rows_holding(a, b, blocks, names, token)
    return _ordered_check("hlo", rows, token, names)


def _within(a: NormalizedText, blocks: list[Block], starts: list[int], section: int
            ) -> list[Block]:
    """The parts of `blocks` (which start at `starts`) inside the span of a section
    (section 0: all of them)."""
    if section == 0:
        return blocks
    start, end = a.sections[section].header, a.sections[section].end
    assert start is not None and end is not None
    out: list[Block] = []
    k = max(0, bisect_right(starts, start) - 1)
    while k < len(blocks) and blocks[k][0] < end:
        i, j, n = blocks[k]
        low, high = max(i, start), min(i + n, end)
        if low < high:
            out.append((low, j + low - i, high - low))
        k += 1
    return out


def _chunks_by_section(a: NormalizedText, blocks: list[Block], starts: list[int]
                       ) -> list[Chunk]:
    """Blocks cut where a's innermost section may change: (section, i, j, n)."""
    chunks = []
    for i, j, n in blocks:
        end = i + n
        while i < end:
            run = bisect_right(starts, i) - 1
            run_end = starts[run + 1] if run + 1 < len(starts) else len(a.raw)
            stop = min(end, run_end)
            chunks.append((a.section_of(i), i, j, stop - i))
            j += stop - i
            i = stop
    return chunks


def _ordered_check(kind: str, rows: list[tuple[int, str, str]], token: re.Pattern[str],
                   only: set[str] | None = None) -> set[int]:
    """Walk paired lines `(a-index, a line, b line)` in order; return the a-indices of pairs
    whose names disagree. With `only`, name pairs with neither name in it are skipped."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    broken: set[int] = set()
    hlo = kind == "hlo"
    for index, line_a, line_b in rows:
        found_a = list(token.finditer(line_a))
        found_b = list(token.finditer(line_b))
        if len(found_a) != len(found_b):
            broken.add(index)
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
            broken.add(index)
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
    """`blocks` with the pairs of the given a-lines taken out (blocks sorted)."""
    out: list[Block] = []
    cuts = sorted(broken)
    position = 0
    for i, j, n in blocks:
        while position < len(cuts) and cuts[position] < i:
            position += 1
        while position < len(cuts) and cuts[position] < i + n:
            cut = cuts[position] - i
            if cut:
                out.append((i, j, cut))
            i, j, n = i + cut + 1, j + cut + 1, n - cut - 1
            position += 1
        if n:
            out.append((i, j, n))
    return out

"""Line matching for two sequences of interned lines, in linear space and without quadratic
blow-ups.

The strategy, from cheapest to most expensive, applied recursively to each unmatched gap:

1. trim the common prefix and suffix (compared slice by slice, so C does the work);
2. a gap whose two sides share no line at all is a plain replacement (all-different inputs
   cost O(n));
3. patience anchoring: lines that occur exactly once on each side, kept in increasing order
   on both sides (longest increasing subsequence, O(k log k)), split the gap into smaller gaps;
4. what is left (gaps of repeated lines only) goes to Myers' O(ND) bisection in linear space,
   with a cost cap: when the edit distance of a gap passes `MAX_COST`, the gap is split at the
   furthest point reached, as GNU diff's "too expensive" heuristic does. The result is then
   a valid, possibly not minimal, diff, and the time stays bounded.

Lines are compared as ints (see `intern_lines`), so every comparison is an int compare.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

# Edit cost after which a gap of repeated lines is split heuristically instead of solved
# exactly. Python does about 10^7 simple steps a second; MAX_COST**2 bounds one bisection.
MAX_COST = 64

Block = tuple[int, int, int]  # (start in a, start in b, length)


def intern_lines(a: Sequence[str], b: Sequence[str]) -> tuple[list[int], list[int]]:
    """Map the lines of both sides to small ints (equal lines, equal ints)."""
    table: dict[str, int] = {}
    setdefault = table.setdefault
    ids_a = [setdefault(line, len(table)) for line in a]
    ids_b = [setdefault(line, len(table)) for line in b]
    return ids_a, ids_b


def matching_blocks(a: Sequence[int], b: Sequence[int]) -> list[Block]:
    """Maximal runs of equal lines, in increasing order on both sides (no end sentinel)."""
    found: list[Block] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        prefix = _common_prefix(a, alo, ahi, b, blo, bhi)
        if prefix:
            found.append((alo, blo, prefix))
            alo += prefix
            blo += prefix
        suffix = _common_suffix(a, alo, ahi, b, blo, bhi)
        if suffix:
            found.append((ahi - suffix, bhi - suffix, suffix))
            ahi -= suffix
            bhi -= suffix
        if alo == ahi or blo == bhi:
            continue
        stack.extend(_split_gap(a, alo, ahi, b, blo, bhi))
    found.sort()
    return merge_blocks(found)


def _split_gap(a: Sequence[int], alo: int, ahi: int, b: Sequence[int], blo: int, bhi: int
               ) -> list[tuple[int, int, int, int]]:
    """Sub-gaps of a gap whose ends differ; empty when the gap is a plain replacement."""
    if ahi - alo == 1 or bhi - blo == 1:
        # One line against many: match it to its first occurrence, if any.
        if ahi - alo == 1:
            try:
                j = b.index(a[alo], blo, bhi)
            except ValueError:
                return []
            return [(alo, alo, blo, j), (alo, ahi, j, bhi)]
        try:
            i = a.index(b[blo], alo, ahi)
        except ValueError:
            return []
        return [(alo, i, blo, blo), (i, ahi, blo, bhi)]
    count_a = Counter(a[alo:ahi])
    count_b = Counter(b[blo:bhi])
    if count_a.keys().isdisjoint(count_b):
        return []
    anchors = _unique_anchors(a, alo, ahi, b, blo, bhi, count_a, count_b)
    if anchors:
        gaps = []
        prev_i, prev_j = alo, blo
        for i, j in anchors:
            gaps.append((prev_i, i, prev_j, j))
            prev_i, prev_j = i, j  # the anchor itself starts the next gap: prefix trim takes it
        gaps.append((prev_i, ahi, prev_j, bhi))
        return gaps
    x, y = _bisect(a, alo, ahi, b, blo, bhi)
    if (x, y) in ((alo, blo), (ahi, bhi)):  # no progress: cut in the middle instead
        x, y = alo + (ahi - alo) // 2, blo + (bhi - blo) // 2
    return [(alo, x, blo, y), (x, ahi, y, bhi)]


def _unique_anchors(a: Sequence[int], alo: int, ahi: int, b: Sequence[int], blo: int,
                    bhi: int, count_a: Counter, count_b: Counter) -> list[tuple[int, int]]:
    """Lines unique on both sides, as the longest chain increasing on both (patience diff)."""
    unique = {line for line, n in count_a.items() if n == 1 and count_b.get(line) == 1}
    if not unique:
        return []
    position_a = {line: i for i, line in enumerate(a[alo:ahi], alo) if line in unique}
    pairs = [(position_a[line], j) for j, line in enumerate(b[blo:bhi], blo) if line in unique]
    # Longest increasing subsequence of the a-positions, in b order (patience sorting).
    tails: list[int] = []  # a-position ending the best chain of each length
    tail_index: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for n, (i, _) in enumerate(pairs):
        k = bisect_left(tails, i)
        if k == len(tails):
            tails.append(i)
            tail_index.append(n)
        else:
            tails[k] = i
            tail_index[k] = n
        back[n] = tail_index[k - 1] if k else -1
    chain = []
    n = tail_index[-1]
    while n >= 0:
        chain.append(pairs[n])
        n = back[n]
    chain.reverse()
    return chain


def _bisect(a: Sequence[int], alo: int, ahi: int, b: Sequence[int], blo: int, bhi: int
            ) -> tuple[int, int]:
    """Myers' middle-snake split point of a gap, or the furthest point reached when the edit
    cost passes MAX_COST."""
    n = ahi - alo
    m = bhi - blo
    max_d = min((n + m + 1) // 2, MAX_COST)
    offset = max_d + 1
    size = 2 * max_d + 3
    v1 = [-1] * size
    v2 = [-1] * size
    v1[offset + 1] = 0
    v2[offset + 1] = 0
    delta = n - m
    front = delta % 2 != 0
    k1start = k1end = k2start = k2end = 0
    best = (0, 0)
    best_progress = 0
    for d in range(max_d):
        for k1 in range(-d + k1start, d + 1 - k1end, 2):
            k1_offset = offset + k1
            if k1 == -d or (k1 != d and v1[k1_offset - 1] < v1[k1_offset + 1]):
                x1 = v1[k1_offset + 1]
            else:
                x1 = v1[k1_offset - 1] + 1
            y1 = x1 - k1
            while x1 < n and y1 < m and a[alo + x1] == b[blo + y1]:
                x1 += 1
                y1 += 1
            v1[k1_offset] = x1
            if x1 > n:
                k1end += 2
            elif y1 > m:
                k1start += 2
            else:
                if x1 + y1 > best_progress and x1 + y1 < n + m:
                    best_progress = x1 + y1
                    best = (x1, y1)
                if front:
                    k2_offset = offset + delta - k1
                    if 0 <= k2_offset < size and v2[k2_offset] != -1 and x1 >= n - v2[k2_offset]:
                        return alo + x1, blo + y1
        for k2 in range(-d + k2start, d + 1 - k2end, 2):
            k2_offset = offset + k2
            if k2 == -d or (k2 != d and v2[k2_offset - 1] < v2[k2_offset + 1]):
                x2 = v2[k2_offset + 1]
            else:
                x2 = v2[k2_offset - 1] + 1
            y2 = x2 - k2
            while x2 < n and y2 < m and a[ahi - x2 - 1] == b[bhi - y2 - 1]:
                x2 += 1
                y2 += 1
            v2[k2_offset] = x2
            if x2 > n:
                k2end += 2
            elif y2 > m:
                k2start += 2
            elif not front:
                k1_offset = offset + delta - k2
                if 0 <= k1_offset < size and v1[k1_offset] != -1:
                    x1 = v1[k1_offset]
                    y1 = offset + x1 - k1_offset
                    if x1 >= n - x2:
                        return alo + x1, blo + y1
    # Too expensive: split where the forward search got furthest when that is a real step
    # forward; otherwise cut in the middle, which keeps the recursion balanced (O(n log n)).
    if best_progress * 8 < n + m:
        return alo + n // 2, blo + m // 2
    return alo + best[0], blo + best[1]


def _common_prefix(a: Sequence[int], alo: int, ahi: int, b: Sequence[int], blo: int,
                   bhi: int) -> int:
    """Length of the common prefix, found by galloping over slice compares (done in C)."""
    n = min(ahi - alo, bhi - blo)
    if n == 0 or a[alo] != b[blo]:
        return 0
    low, step = 1, 1  # a[alo:alo+low] == b[blo:blo+low] is known
    while low < n:
        high = min(n, low + step)
        if a[alo + low:alo + high] != b[blo + low:blo + high]:
            break
        low = high
        step *= 2
    else:
        return n
    high = min(n, low + step)  # the first difference lies in [low, high)
    while high - low > 1:
        mid = (low + high) // 2
        if a[alo + low:alo + mid] == b[blo + low:blo + mid]:
            low = mid
        else:
            high = mid
    return low


def _common_suffix(a: Sequence[int], alo: int, ahi: int, b: Sequence[int], blo: int,
                   bhi: int) -> int:
    n = min(ahi - alo, bhi - blo)
    if n == 0 or a[ahi - 1] != b[bhi - 1]:
        return 0
    low, step = 1, 1
    while low < n:
        high = min(n, low + step)
        if a[ahi - high:ahi - low] != b[bhi - high:bhi - low]:
            break
        low = high
        step *= 2
    else:
        return n
    high = min(n, low + step)
    while high - low > 1:
        mid = (low + high) // 2
        if a[ahi - mid:ahi - low] == b[bhi - mid:bhi - low]:
            low = mid
        else:
            high = mid
    return low


def merge_blocks(blocks: list[Block]) -> list[Block]:
    """Join blocks that continue each other (input sorted)."""
    merged: list[Block] = []
    for i, j, n in blocks:
        if n == 0:
            continue
        if merged:
            pi, pj, pn = merged[-1]
            if pi + pn == i and pj + pn == j:
                merged[-1] = (pi, pj, pn + n)
                continue
        merged.append((i, j, n))
    return merged

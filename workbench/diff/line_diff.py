"""Line matching for two sequences of lines, in linear space and without quadratic blow-ups.

The strategy, from cheapest to most expensive, applied recursively to each unmatched gap:

1. trim the common prefix and suffix (compared slice by slice, so C does the work);
2. a gap whose two sides share no line at all is a plain replacement (all-different inputs
   cost O(n));
3. patience anchoring: lines that occur exactly once on each side, kept in increasing order
   on both sides (longest increasing subsequence, O(k log k)), split the gap into smaller gaps;
   runs of consecutive anchors are matched as one block, so only real gaps are revisited;
4. what is left (gaps of repeated lines only) goes to Myers' O(ND) bisection in linear space,
   with a cost cap: when the edit distance of a gap passes `MAX_COST`, the gap is split at the
   furthest point reached, as GNU diff's "too expensive" heuristic does. The result is then
   a valid, possibly not minimal, diff, and the time stays bounded.

Lines are any hashable values compared with `==` (the diff passes strings: hashing and
comparing them is C work). Finding the anchors is a handful of C-level passes (dicts built
from `zip`, `map`, `compress`), so a 6,000-line gap costs about a millisecond, not a Python
loop per line.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import compress, repeat
from operator import and_, eq, ne, or_, sub

# Edit cost after which a gap of repeated lines is split heuristically instead of solved
# exactly. Python does about 10^7 simple steps a second; MAX_COST**2 bounds one bisection.
MAX_COST = 64

Block = tuple[int, int, int]  # (start in a, start in b, length)
Gap = tuple[int, int, int, int]  # (a start, a end, b start, b end)


def matching_blocks(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Block]:
    """Maximal runs of equal lines, in increasing order on both sides (no end sentinel)."""
    return matching_blocks_in(a, b, [(0, len(a), 0, len(b))])


def matching_blocks_in(a: Sequence[Hashable], b: Sequence[Hashable], gaps: list[Gap],
                       exhaustive: bool = True) -> list[Block]:
    """Matching blocks of `a` and `b` inside the given gaps only (each gap is matched on
    its own; gaps must not overlap). Not `exhaustive`: a gap without unique lines is left
    as it is (no Myers), for a quick first round that a finer one completes."""
    found: list[Block] = []
    stack = list(gaps)
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
        _split_gap(a, alo, ahi, b, blo, bhi, found, stack, exhaustive)
    found.sort()
    return merge_blocks(found)


def _split_gap(a: Sequence[Hashable], alo: int, ahi: int, b: Sequence[Hashable], blo: int,
               bhi: int, found: list[Block], stack: list[Gap], exhaustive: bool = True) -> None:
    """Match what can be matched cheaply in a gap whose ends differ; push sub-gaps."""
    if ahi - alo == 1 or bhi - blo == 1:
        # One line against many: match it to its first occurrence, if any.
        if ahi - alo == 1:
            try:
                j = b.index(a[alo], blo, bhi)
            except ValueError:
                return
            found.append((alo, j, 1))
            stack.append((alo + 1, ahi, j + 1, bhi))
            return
        try:
            i = a.index(b[blo], alo, ahi)
        except ValueError:
            return
        found.append((i, blo, 1))
        stack.append((i + 1, ahi, blo + 1, bhi))
        return
    side_a = a[alo:ahi]
    side_b = b[blo:bhi]
    last_b = dict(zip(side_b, range(len(side_b)), strict=True))
    if last_b.keys().isdisjoint(side_a):
        return
    anchors = _unique_anchors(side_a, side_b, last_b)
    if anchors[0]:
        _push_between_anchors(anchors, alo, ahi, blo, bhi, found, stack)
        return
    if not exhaustive:
        return
    x, y = _bisect(a, alo, ahi, b, blo, bhi)
    if (x, y) in ((alo, blo), (ahi, bhi)):  # no progress: cut in the middle instead
        x, y = alo + (ahi - alo) // 2, blo + (bhi - blo) // 2
    stack.append((alo, x, blo, y))
    stack.append((x, ahi, y, bhi))


def _unique_anchors(side_a: Sequence[Hashable], side_b: Sequence[Hashable],
                    last_b: dict) -> tuple[list[int], list[int]]:
    """Lines unique on both sides, as the longest chain increasing on both (patience diff):
    (positions in a, positions in b), relative to the sides."""
    n = len(side_a)
    m = len(side_b)
    last_a = dict(zip(side_a, range(n), strict=True))
    first_a = dict(zip(reversed(side_a), range(n - 1, -1, -1), strict=True))
    first_b = dict(zip(reversed(side_b), range(m - 1, -1, -1), strict=True))
    # A line is an anchor when its first and last positions agree on each side (absent from
    # b: -1 and -2 never agree).
    unique_a = map(eq, map(first_a.__getitem__, side_a), map(last_a.__getitem__, side_a))
    unique_b = map(eq, map(first_b.get, side_a, repeat(-1)), map(last_b.get, side_a,
                                                                  repeat(-2)))
    mask = list(map(and_, unique_a, unique_b))
    positions_a = list(compress(range(n), mask))
    if not positions_a:
        return [], []
    positions_b = list(map(last_b.__getitem__, compress(side_a, mask)))
    if positions_b != sorted(positions_b):
        positions_a, positions_b = _longest_increasing(positions_a, positions_b)
    return positions_a, positions_b


def _runs(positions_a: list[int], positions_b: list[int]) -> list[int]:
    """Indices where a run of anchors ends (the next anchor is not one line further on both
    sides), the last anchor included."""
    breaks = compress(range(len(positions_a) - 1), map(
        or_, map(ne, map(sub, positions_a[1:], positions_a), repeat(1)),
        map(ne, map(sub, positions_b[1:], positions_b), repeat(1))))
    return [*breaks, len(positions_a) - 1]


def _longest_increasing(positions_a: list[int], positions_b: list[int]
                        ) -> tuple[list[int], list[int]]:
    """The most anchors that increase on both sides.

    Anchors come in runs (consecutive on both sides); each position occurs once, so two runs
    occupy disjoint ranges of b and a chain takes a run whole or not at all: the answer is
    the heaviest chain of runs.
    """
    ends = _runs(positions_a, positions_b)
    starts = [0, *(end + 1 for end in ends[:-1])]
    runs = [(positions_a[start], positions_b[start], end - start + 1)
            for start, end in zip(starts, ends, strict=True)]
    kept_a: list[int] = []
    kept_b: list[int] = []
    for i, j, n in heaviest_chain(runs):
        kept_a += range(i, i + n)
        kept_b += range(j, j + n)
    return kept_a, kept_b


def heaviest_chain(blocks: list[Block]) -> list[Block]:
    """The blocks (sorted by a, disjoint on each side) that increase on both sides and hold
    the most lines between them.

    A Fenwick tree of prefix maxima over the blocks' ranks in b: O(r log r) for r blocks.
    """
    count = len(blocks)
    if count < 2 or all(blocks[k][1] < blocks[k + 1][1] for k in range(count - 1)):
        return blocks
    order = sorted(range(count), key=lambda r: blocks[r][1])
    rank = [0] * count
    for position, block in enumerate(order, 1):
        rank[block] = position
    tree_weight = [0] * (count + 1)
    tree_block = [-1] * (count + 1)
    back = [-1] * count
    total = [0] * count
    for block in range(count):
        best, best_block = 0, -1
        k = rank[block] - 1
        while k > 0:  # the heaviest chain ending in a block lower in b
            if tree_weight[k] > best:
                best, best_block = tree_weight[k], tree_block[k]
            k -= k & -k
        total[block] = best + blocks[block][2]
        back[block] = best_block
        k = rank[block]
        while k <= count:
            if total[block] > tree_weight[k]:
                tree_weight[k], tree_block[k] = total[block], block
            k += k & -k
    block = max(range(count), key=total.__getitem__)
    chain = []
    while block >= 0:
        chain.append(blocks[block])
        block = back[block]
    chain.reverse()
    return chain


def _push_between_anchors(anchors: tuple[list[int], list[int]], alo: int, ahi: int, blo: int,
                          bhi: int, found: list[Block], stack: list[Gap]) -> None:
    """Runs of consecutive anchors become blocks; the gaps between runs go on the stack."""
    positions_a, positions_b = anchors
    start = 0
    prev_i, prev_j = alo, blo
    for end in _runs(positions_a, positions_b):
        i = alo + positions_a[start]
        j = blo + positions_b[start]
        length = end - start + 1
        stack.append((prev_i, i, prev_j, j))
        found.append((i, j, length))
        prev_i, prev_j = i + length, j + length
        start = end + 1
    stack.append((prev_i, ahi, prev_j, bhi))


def _bisect(a: Sequence[Hashable], alo: int, ahi: int, b: Sequence[Hashable], blo: int, bhi: int
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


def _common_prefix(a: Sequence[Hashable], alo: int, ahi: int, b: Sequence[Hashable], blo: int,
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


def _common_suffix(a: Sequence[Hashable], alo: int, ahi: int, b: Sequence[Hashable], blo: int,
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


def gaps_between(items: list[Block], len_a: int, len_b: int) -> list[Gap]:
    """The unpaired stretches between sorted blocks (a zero-length block only splits; one
    that falls inside a block, on its diagonal, is no split)."""
    gaps: list[Gap] = []
    i = j = 0
    for bi, bj, n in items:
        if i < bi or j < bj:
            gaps.append((i, bi, j, bj))
        i, j = max(i, bi + n), max(j, bj + n)
    if i < len_a or j < len_b:
        gaps.append((i, len_a, j, len_b))
    return gaps


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

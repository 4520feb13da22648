"""Line matching: valid on random inputs, bounded on adversarial large ones."""

from __future__ import annotations

import random

import pytest

from workbench.diff.line_diff import matching_blocks, matching_blocks_in


def _check(a: list[int], b: list[int]) -> int:
    """Blocks are in order on both sides and really match; returns the matched line count."""
    end_a = end_b = 0
    for i, j, n in matching_blocks(a, b):
        assert n > 0 and i >= end_a and j >= end_b
        assert a[i:i + n] == b[j:j + n]
        end_a, end_b = i + n, j + n
    return sum(n for *_, n in matching_blocks(a, b))


def test_random_small_inputs_give_valid_matches() -> None:
    rng = random.Random(7)
    for _ in range(500):
        a = [rng.randint(0, 4) for _ in range(rng.randint(0, 25))]
        b = [rng.randint(0, 4) for _ in range(rng.randint(0, 25))]
        _check(a, b)


def test_one_inserted_line_keeps_everything_else() -> None:
    a = list(range(1000))
    b = [*a[:500], -1, *a[500:]]
    assert _check(a, b) == 1000


def test_moved_block_keeps_the_longer_part() -> None:
    # Unique lines out of order: the anchors are the longest chain increasing on both sides.
    a = [f"line {k}" for k in range(100)]
    b = a[60:] + a[:60]
    assert _check(a, b) == 60
    assert matching_blocks(a, b) == [(0, 40, 60)]


def test_matching_stays_inside_the_gaps() -> None:
    a = ["p", "q", "r"]
    b = ["q", "r", "p"]
    assert matching_blocks(a, b) == [(1, 0, 2)]
    # Split after the first line on both sides: only `r` can still be paired.
    assert matching_blocks_in(a, b, [(0, 1, 0, 1), (1, 3, 1, 3)]) == [(2, 1, 1)]


@pytest.mark.parametrize("n", [10_000, pytest.param(100_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("case", ["all-different", "all-same", "repeated-blocks", "shifted"])
def test_adversarial_inputs_finish(case: str, n: int) -> None:
    if case == "all-different":
        a, b = list(range(n)), list(range(n, 2 * n))
        expected = 0
    elif case == "all-same":
        a, b = [1] * n, [1] * (n // 2)
        expected = n // 2
    elif case == "repeated-blocks":
        a = [i % 10 for i in range(n)]
        b = [i % 10 if i % 997 else 11 for i in range(n)]
        expected = None
    else:
        a = [i % 10 for i in range(n)]
        b = [-1, *a]
        expected = n
    matched = _check(a, b)
    if expected is not None:
        assert matched == expected
    else:
        assert matched > n * 0.95

"""Line matching: valid on random inputs, bounded on adversarial large ones."""

from __future__ import annotations

import random

import pytest

from workbench.diff.line_diff import intern_lines, matching_blocks


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


def test_interning_maps_equal_lines_to_equal_ids() -> None:
    ids_a, ids_b = intern_lines(["x", "y", "x"], ["y", "z"])
    assert ids_a[0] == ids_a[2] and ids_a[1] == ids_b[0] and ids_b[1] not in ids_a


@pytest.mark.parametrize("case", ["all-different", "all-same", "repeated-blocks", "shifted"])
def test_adversarial_100k_lines_finish(case: str) -> None:
    n = 100_000
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

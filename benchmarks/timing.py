"""The timing the benchmarks share (each is run as `python benchmarks/NAME.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(repeat: int, run: Callable[[], object]) -> float:
    """The best wall time of `repeat` runs of `run`: the least disturbed by other work."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)

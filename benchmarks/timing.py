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


def interleaved_best(repeat: int, runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The best wall time of each of `runs` over `repeat` rounds, one of each per round: load
    from other work that comes and goes falls on every run alike, not on one series."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}

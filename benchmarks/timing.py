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


def interleaved_best(repeat: int,
                     runs: dict[str, Callable[[], object]]) -> dict[str, tuple[float, float]]:
    """The best wall time and the best CPU time of this process for each of `runs` over
    `repeat` rounds, one of each per round: load from other work that comes and goes falls on
    every run alike, not on one series (and CPU time does not count waiting for a core)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start, cpu = time.perf_counter(), time.process_time()
            run()
            times[name].append((time.perf_counter() - start, time.process_time() - cpu))
    return {name: (min(w for w, _ in values), min(c for _, c in values))
            for name, values in times.items()}

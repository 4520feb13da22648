"""Shared by the TUI benchmarks: the dumps they run on, and a clock on the app's frames.

The app runs headless (`App.run_test`): it lays out and renders every frame as in a terminal,
only the final write to the terminal is skipped. Frames are timed by wrapping the screen's
compositor refresh, which Textual calls once per frame that changes the screen.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from textual import events  # noqa: E402
from textual.app import App  # noqa: E402
from textual.screen import Screen  # noqa: E402

FRAMES: list[float] = []  # perf_counter() of every frame drawn since `start_clock`


def start_clock() -> None:
    FRAMES.clear()
    if getattr(Screen._compositor_refresh, "timed", False):
        return
    original = Screen._compositor_refresh

    def timed(self: Screen) -> None:
        original(self)
        FRAMES.append(time.perf_counter())

    timed.timed = True  # type: ignore[attr-defined]  # a mark on the function
    Screen._compositor_refresh = timed  # type: ignore[method-assign]  # timed in place of Textual's


def first_frame_after(moment: float) -> float | None:
    return next((t for t in FRAMES if t >= moment), None)


async def key_latency(app: App, key: str, moved: Callable[[], bool],
                      timeout: float = 30) -> float:
    """Post `key`; wait until `moved()` says the app acted, then for a frame after that."""
    posted = time.perf_counter()
    app.post_message(events.Key(key, None))
    while not moved():
        if time.perf_counter() - posted > timeout:
            raise SystemExit(f"key {key!r} not handled within {timeout} s")
        await asyncio.sleep(0.0005)
    acted = time.perf_counter()
    while (frame := first_frame_after(acted)) is None:
        await asyncio.sleep(0.0005)
    return frame - posted


def large_dump() -> tuple[Path, str]:
    """The large real dump (JAX's transformer training step), made if JAX is installed.
    Returns the folder and how it was made."""
    from large_dump import MissingJax, make_dump

    try:
        return make_dump(4), "real JAX dump (tests/data/corpus/xla-large/program.py, 4 layers)"
    except MissingJax as error:
        raise SystemExit(str(error)) from None


def percentiles(values: list[float]) -> str:
    """`p50 12.3 ms  p95 45.6 ms  max 78.9 ms` of seconds."""
    if not values:
        return "no samples"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  "
            f"max {ordered[-1] * 1000:7.1f} ms  (n={len(ordered)})")


def best_of(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))

"""How long one step's evaluation may run before it is taken for a loop that never ends.

A miscompiled loop can run forever (a counter's `add` turned into `subtract`): the step then
differs from the reference in the plainest way, it does not finish. Only a loop can make an
evaluation unbounded (every other op's work is fixed by its shapes), so the evaluators check
the deadline once per iteration of `while` (HLO, StableHLO), of `scf.for`, `scf.while`,
`scf.parallel` and `affine.for` (a planted bound can make a counted loop endless in practice),
and per branch back to a block (MLIR's `cf`), and raise `DidNotFinish` naming the loop. The
replay sets the deadline from the reference's own time (`steps.Replay`); nothing is checked
outside `evaluation_deadline`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from workbench.replay.errors import EvaluationError


class DidNotFinish(EvaluationError):
    """A loop still running when the evaluation's time was up."""


class _Deadline(threading.local):
    at: float | None = None  # time.monotonic() when the evaluation's time is up
    seconds: float = 0.0


_DEADLINE = _Deadline()


@contextmanager
def evaluation_deadline(seconds: float | None) -> Iterator[None]:
    """Run the block with `seconds` to finish loops in (None: no deadline), in this thread."""
    before = (_DEADLINE.at, _DEADLINE.seconds)
    if seconds is not None:
        _DEADLINE.at, _DEADLINE.seconds = time.monotonic() + seconds, seconds
    try:
        yield
    finally:
        _DEADLINE.at, _DEADLINE.seconds = before


def check_loop(loop: str, iterations: int) -> None:
    """Raise `DidNotFinish` when the deadline has passed: `loop` (its name and op name) has
    run `iterations` times so far."""
    if _DEADLINE.at is not None and time.monotonic() > _DEADLINE.at:
        raise DidNotFinish(f"did not finish: {loop} was still looping after {iterations:,} "
                           f"iterations, {_DEADLINE.seconds:.3g} s")

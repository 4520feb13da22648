"""How long a test waits for what it expects, and the one loop that waits.

CI runs on whatever machine is free, often one busy with other work, where a Python start-up
can take seconds and a process's end many more. A test waits for a condition (a result, a
message, a process gone) up to `PATIENCE` and then asserts on the outcome, never on how long it
took: how fast cancellation, start-up or key handling is, `benchmarks/` measures and prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable

PATIENCE = 300.0  # seconds: far beyond any healthy wait, even with every core busy elsewhere

# A job that runs this long never ends by itself within a test: one that has ended was stopped.
FOREVER = 3600.0


def wait_for(condition: Callable[[], object], what: str, seconds: float = PATIENCE,
             poll: float = 0.05) -> None:
    """Poll `condition` until it holds; fail naming `what` if it has not after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {seconds:g} s"
        time.sleep(poll)


# A per-job time limit that quick jobs (a fresh process's imports included) meet on a busy
# machine; tests that need a job stopped by the limit give it a FOREVER job.
JOB_TIME_LIMIT = 20.0

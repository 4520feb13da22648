"""Where a replay stands while it runs: which evaluation, of which step, how much memory the
process tree holds, and about how long the rest takes.

At model size one verdict takes minutes and most of them are not steps: the reference in f64
(twice) and `SAMPLES` random-rounding evaluations plus the split sample for the noise inside
the program. A bar over steps alone sits still through them. Each evaluation is counted in
*units* of about one evaluation of the reference (the noise stage is `SAMPLES + 1` of them),
and the time left is the units still planned at the pace of those done. Evaluations that
run side by side (`steps.ParallelEvaluations`) count the time they take together: the truth
and its twin on two workers are one unit. The plan is an upper bound (a bisection's
`ceil(log2 N) + 2` steps, both truths, the noise stage), so the estimate errs long, never
short. A noise stage whose values do not fit in memory at once runs again for each group of
them (`judge/noise/budget.py`): as it starts it says each of its evaluations (from a worker
process through `processes.workers.report`; its groups, when workers share its samples),
and the plan grows to hold them all.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

# What each evaluation of a replay is (`ReplayPhase.what`).
REFERENCE = "reference"
STEP = "step"
TRUTH = "f64 truth"
PERTURBED_TRUTH = "f64 truth on perturbed inputs"
NOISE_STAGE = "random rounding"
FLUSHED = "reference with subnormals as zero"


@dataclass(frozen=True)
class ReplayPhase:
    """One evaluation starting: `what` (`REFERENCE`, `STEP`, ...), the step's position and
    label for a step, the units done and planned (`PhaseClock`), the seconds since the replay
    started and the estimate of those left (None until one evaluation has finished), and the
    resident memory of this process and its descendants (None where /proc is not)."""

    what: str
    position: int | None
    label: str
    units_done: float
    units_planned: float
    elapsed: float
    seconds_left: float | None
    tree_memory: int | None

    def describe(self) -> str:
        """`step 45 (after_fusion)`, `random rounding`: what a progress line shows."""
        if self.what == STEP and self.position is not None:
            return f"step {self.position} ({self.label})" if self.label else \
                f"step {self.position}"
        return f"{self.what} {self.label}" if self.label else self.what


def truth_units(workers: int) -> float:
    """The f64 truth and its perturbed twin, in units: one after the other, or side by side
    on two workers or more."""
    return 2.0 if workers < 2 else 1.0


def noise_units(workers: int) -> float:
    """The noise stage, in units, on `workers` at once: each runs sample 0 (which the others
    are compared with) and its share of the other samples, then the split sample runs."""
    from workbench.replay.judge.noise.model import SAMPLES

    return 1.0 + math.ceil((SAMPLES - 1) / max(1, workers)) + 1.0


@dataclass
class PhaseClock:
    """Counts a replay's evaluations in units and estimates the time left."""

    units_planned: float
    units_done: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    _current: float = 0.0  # units of the evaluation running now

    def start(self, what: str, units: float, position: int | None = None,
              label: str = "", ahead: float = 0.0, replaces: bool = False) -> ReplayPhase:
        """The phase of an evaluation of `units` starting (the one before it has ended, or
        with `replaces`, has not run: it was said before this one was known), with at least
        `ahead` units known to follow it (a noise stage's later samples)."""
        if not replaces:
            self.units_done += self._current
        self._current = units
        self.units_planned = max(self.units_planned, self.units_done + units + ahead)
        elapsed = time.perf_counter() - self.started
        left = None
        if self.units_done > 0:
            left = elapsed / self.units_done * (self.units_planned - self.units_done)
        return ReplayPhase(what, position, label, self.units_done, self.units_planned,
                           elapsed, left, tree_resident_bytes())


def tree_resident_bytes(root: int | None = None, anonymous: bool = False) -> int | None:
    """Resident bytes of process `root` (this one by default) and all its descendants, from
    /proc; None where there is no /proc. Worker processes count: they are descendants.
    `anonymous`: only what no file backs (resident less shared pages, `statm`): without the
    mapped pages of values a replay keeps on disk (`spill.py`), which the system can drop."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    root = os.getpid() if root is None else root
    page = os.sysconf("SC_PAGE_SIZE")
    children: dict[int, list[int]] = {}
    resident: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        resident[int(entry.name)] = int(fields[21]) * page
        if anonymous:
            try:
                pages = (entry / "statm").read_text().split()
            except OSError:
                continue
            resident[int(entry.name)] = (int(pages[1]) - int(pages[2])) * page
    total, frontier = 0, [root]
    while frontier:
        pid = frontier.pop()
        total += resident.get(pid, 0)
        frontier.extend(children.get(pid, ()))
    return total

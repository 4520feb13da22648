"""A replay says which evaluation runs, how much memory its process tree holds and about how
long the rest takes (`replay/progress.py`), on a real dump whose verdict needs the f64 truth
and the random-rounding samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.index import scan
from workbench.replay.bisect import bisect_replay, evaluation_bound
from workbench.replay.judge.noise.model import SAMPLES
from workbench.replay.progress import (
    FLUSHED,
    NOISE_STAGE,
    REFERENCE,
    STEP,
    TRUTH,
    PhaseClock,
    ReplayPhase,
    tree_resident_bytes,
)
from workbench.replay.steps import ProcessRunner, open_replay

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"


@pytest.mark.parametrize("runner", ["here", "worker process"])
def test_a_bisection_reports_each_evaluation_as_it_starts(runner: str) -> None:
    """In this process (the command line) or in a worker process of its own (the app's),
    every evaluation is said as it starts, the noise stage's each."""
    dump = scan(DUMP)
    module = next(m for m in dump.modules if m.key == "module_0010")
    phases: list[ReplayPhase] = []
    with open_replay(dump.root, module, module.executions[0],
                     runner=ProcessRunner() if runner != "here" else None) as replay:
        replay.on_phase = phases.append
        replay.planned_steps = evaluation_bound(len(replay.steps))
        verdict = bisect_replay(replay)
    whats = [phase.what for phase in phases]
    assert whats[0] == REFERENCE and TRUTH in whats and NOISE_STAGE in whats
    steps = [phase for phase in phases if phase.what == STEP]
    assert len(steps) == verdict.evaluations - 1  # every step but the reference
    assert all(phase.position and phase.label for phase in steps)
    assert steps[0].describe() == f"step {steps[0].position} ({steps[0].label})"
    # The recording differs from the reference here: it is judged as XLA CPU computes too.
    assert whats.count(FLUSHED) == 1
    # The noise stage, run here, says each of its evaluations: the samples, the split sample
    # and, where some value lies within its noise of zero, the domain sample.
    # The stage is said as a whole until it says its first evaluation.
    noise = [phase for phase in phases if phase.what == NOISE_STAGE]
    assert noise[0].label == ""
    assert [phase.label for phase in noise[1:SAMPLES + 2]] == [
        *(f"sample {n} of {SAMPLES}" for n in range(1, SAMPLES + 1)), "split sample"]
    assert len(noise) - 1 in (SAMPLES + 1, SAMPLES + 2) and replay.noise_evaluations == 1
    assert len(phases) == (verdict.evaluations + replay.shadow_evaluations + len(noise) + 1)
    # Units: one per evaluation, counted as each ends (the stage as a whole is not: its
    # evaluations are); as the stage starts, the plan holds all of its evaluations.
    done = [phase.units_done for phase in phases]
    assert done == sorted(done) and done[0] == 0
    assert done[-1] == len(phases) - 2
    assert all(phase.units_done < phase.units_planned for phase in phases)
    assert noise[1].units_planned >= noise[1].units_done + SAMPLES + 2
    assert phases[0].seconds_left is None
    assert all(phase.seconds_left is not None and phase.seconds_left >= 0
               for phase in phases[1:])
    assert all(phase.tree_memory is not None and phase.tree_memory > 10 * 2**20
               for phase in phases)


def test_the_time_left_is_the_units_planned_at_the_pace_so_far() -> None:
    clock = PhaseClock(units_planned=10.0)
    clock.start(REFERENCE, 1.0)
    clock.started -= 2.0  # as if the reference took 2 s
    second = clock.start(NOISE_STAGE, 4.0)
    assert second.units_done == 1.0
    assert second.seconds_left is not None
    assert np.isclose(second.seconds_left, 2.0 * 9, rtol=0.05)  # 9 units left at 2 s each
    # More work than planned (a linear replay past the bound) stretches the plan.
    last = PhaseClock(units_planned=1.0)
    last.start(STEP, 1.0)
    assert last.start(STEP, 1.0).units_planned == 2.0


def test_the_tree_memory_counts_child_processes() -> None:
    import subprocess
    import sys

    alone = tree_resident_bytes()
    assert alone is not None
    child = subprocess.Popen([sys.executable, "-c",
                              "import numpy, sys; a = numpy.ones(2**24); sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        from tests.helpers.patience import wait_for

        wait_for(lambda: (tree_resident_bytes() or 0) > alone + 100 * 2**20,
                 "the child's 128 MB in the tree's memory")
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()

"""During `r` and `b` the timeline marks the row being evaluated (▶, a glyph, so NO_COLOR shows
it too): the mark moves with the evaluation, its result replaces it, and it is gone when the
job ends or is cancelled. The status line names the evaluation running."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.model import Execution, Module
from workbench.replay.backends import open_backend
from workbench.replay.progress import ReplayPhase
from workbench.replay.steps import Replay
from workbench.tui.app import WorkbenchApp
from workbench.tui.jobs import Job, Jobs
from workbench.tui.panes.timeline import TimelinePane


def gate_phases(monkeypatch: pytest.MonkeyPatch) -> threading.Semaphore:
    """Each evaluation of a step waits, once it has been announced, until the test releases it
    (or the job is cancelled): on a fast machine the whole replay could end between two
    looks. The judgment's own stages (the f64 truth) run on."""
    gate = threading.Semaphore(0)
    opened = Jobs.replay_of

    def gated(self: Jobs, module: Module, execution: Execution | None, job: Job) -> Replay:
        replay = opened(self, module, execution, job)
        announce = replay.on_phase
        assert announce is not None

        def on_phase(phase: ReplayPhase) -> None:
            announce(phase)
            while phase.position is not None and not job.cancel.is_set() and \
                    not gate.acquire(timeout=0.05):
                pass

        replay.on_phase = on_phase
        return replay

    monkeypatch.setattr(Jobs, "replay_of", gated)
    return gate


def marked_rows(table_lines: list[str]) -> list[int]:
    """The `#` of every timeline row whose result column shows ▶."""
    return [int(line.split()[0]) for line in table_lines[1:] if line.rstrip().endswith("▶")]


def row_of(table_lines: list[str], number: int) -> str:
    return next(line for line in table_lines[1:] if line.split()[:1] == [str(number)])


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "no_color"])
def test_the_row_being_evaluated_is_marked(example: Path, drive, lines, until,
                                           monkeypatch: pytest.MonkeyPatch,
                                           size: tuple[int, int], no_color: bool) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    gate = gate_phases(monkeypatch)
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(TimelinePane).table
        module = app.module
        assert module is not None
        replayed = [s.index for s in open_backend(app.dump.root, module).steps()][:3]
        assert replayed[0] == 1  # #0 is the StableHLO the compiler was given
        await pilot.press("r")
        # The reference (the first replayable step) is evaluated first.
        await until(pilot, lambda: marked_rows(lines(table)) == [replayed[0]])
        assert f"reference #{replayed[0]} " in app.status_bar.job
        gate.release()
        # Then the next step: its row takes the mark, the reference's row its result.
        await until(pilot, lambda: marked_rows(lines(table)) == [replayed[1]])
        assert row_of(lines(table), replayed[0]).rstrip().endswith("✓")
        assert f"step #{replayed[1]} " in app.status_bar.job
        gate.release()
        await until(pilot, lambda: marked_rows(lines(table)) == [replayed[2]])
        assert row_of(lines(table), replayed[1]).rstrip().endswith("✓")
        await pilot.press("escape")
        await until(pilot, lambda: not app.jobs.busy)
        await until(pilot, lambda: not marked_rows(lines(table)))  # the results' redraw
        assert app.evaluating is None and app.status_bar.job == ""

    drive(app, scenario, size=size)  # closing the app cancels the job: the gate opens


def test_the_status_line_names_each_random_rounding_evaluation(
        example: Path, drive, until, monkeypatch: pytest.MonkeyPatch) -> None:
    """`b` on the example needs the noise stage: it runs in a worker process, and the status
    line still names each of its evaluations as it starts."""
    from workbench.replay.judge.noise.model import SAMPLES
    from workbench.tui.jobs import JobPhase
    from workbench.tui.replay_control import ReplayControl

    said: list[str] = []
    announced = ReplayControl.on_job_phase

    def recording(self: ReplayControl, event: JobPhase) -> None:
        announced(self, event)
        said.append(event.job.phase)

    monkeypatch.setattr(ReplayControl, "on_job_phase", recording)
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and bool(said))

    drive(app, scenario)
    samples = [f"random rounding sample {n} of {SAMPLES}" for n in range(1, SAMPLES + 1)]
    assert [phase for phase in said if phase in samples] == samples, said
    assert "random rounding split sample" in said

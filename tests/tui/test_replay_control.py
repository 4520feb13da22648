"""Background replay from the app: triage streams badges, replay streams step results, cancel
stops a job while the keys keep working."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from tests.helpers.patience import PATIENCE
from workbench.replay.steps import StepResult
from workbench.tui import jobs
from workbench.tui.app import WorkbenchApp
from workbench.tui.jobs import Job, Jobs
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.replay_log import ReplayLogPane


def test_triage_badges_every_module(example: Path, drive, lines, until,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    app = WorkbenchApp(example, watch=False)
    # The triage waits until the status bar was seen showing it: on a fast machine it could
    # end before the key press returns.
    seen = threading.Event()
    triage = jobs.triage
    monkeypatch.setattr(jobs, "triage", lambda *a, **k: (seen.wait(PATIENCE), triage(*a, **k))[1])

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("T")
        assert app.jobs.busy and "triage" in app.status_bar.job
        seen.set()
        await until(pilot, lambda: not app.jobs.busy)
        states = {m.name: app.book.module_status(m.key) for m in app.dump.modules}
        assert states["jit_ln"].state == "mismatch"
        assert states["jit_ln"].detail == "#30 fusion in HLO_passes_after_layout_assignment"
        assert {s.state for name, s in states.items() if name != "jit_ln"} == {"ok"}
        table = app.pane(ModulesPane).table
        await pilot.press("1", "t", "s", "s", "s")  # show helpers, sort by status
        assert table.rows[0].name == "jit_ln"
        shown = lines(table)
        assert shown[1].startswith("✗") and all(line.startswith("✓") for line in shown[2:8])
        log = app.pane(ReplayLogPane).lines
        assert sum("triage" in line for line in log) == 10  # 9 results, then the summary
        assert log[-1].endswith("triage done: 9 executions (1 failing, 8 ok)")
        assert "cached" not in "\n".join(log)  # evaluated now, the cache was empty
        assert app.status_bar.job == ""

    drive(app, scenario)


def test_replay_streams_and_cancel_keeps_the_app_responsive(example: Path, drive, wait,
                                                            until,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    app = WorkbenchApp(example, watch=False)
    # The first replay holds after each step until it is cancelled: on a fast machine all 38
    # steps could be done before the escape key arrives.
    hold = [True]
    stream = Jobs._stream

    def held(self: Jobs, job: Job) -> Callable[[StepResult], None]:
        on_result = stream(self, job)

        def streamed(result: StepResult) -> None:
            on_result(result)
            if hold[0]:
                job.cancel.wait(PATIENCE)
        return streamed

    monkeypatch.setattr(Jobs, "_stream", held)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("r")
        await until(pilot, lambda: any(k[0] == "module_0010" for k in app.book.steps))
        hold[0] = False
        await pilot.press("escape")
        await until(pilot, lambda: not app.jobs.busy)
        log = app.pane(ReplayLogPane).lines
        assert any("cancelled" in line for line in log), log[-3:]
        evaluated = [k for k in app.book.steps if k[0] == "module_0010"]
        assert 0 < len(evaluated) < 38
        # Not left "running", nor "not replayed": what was done is said.
        status = app.book.module_status("module_0010")
        assert status.state == "stopped", status
        assert status.text == (f"· stopped: cancelled after {len(evaluated)} "
                               f"step{'s' if len(evaluated) > 1 else ''} of 38 evaluated, "
                               f"{len(evaluated)} ✓"), status.text

        await pilot.press("3", "r")  # a full replay afterwards: every step gets its result
        await until(pilot, lambda: not app.jobs.busy)
        results = [app.book.step_status("module_0010", s) for s in app.module.steps[1:]]
        assert all(r.state in ("ok", "mismatch") for r in results)
        assert [r.state for r in results].index("mismatch") == 29  # step 30: 0028 fusion

    drive(app, scenario)


def test_keys_answered_and_cancel_during_a_long_triage(corpus: Path, drive, until,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """583 executions of a peer's test suite, cancelled after a few keys. After its first
    result the triage holds until it is cancelled: on a fast machine (or with warm workers) it
    could be done before the keys are."""
    app = WorkbenchApp(corpus / "xla-jax-tests" / "numpy-reducers", watch=False)
    triage = jobs.triage

    def held_triage(*args, on_result, cancel, **kwargs):  # type: ignore[no-untyped-def]  # stands in for triage's own signature
        def held(result: object) -> None:
            on_result(result)
            cancel.wait(PATIENCE)
        return triage(*args, on_result=held, cancel=cancel, **kwargs)

    monkeypatch.setattr(jobs, "triage", held_triage)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("T")
        await until(pilot, lambda: app.jobs.current is not None and app.jobs.current.done > 0)
        job = app.jobs.current
        table = app.pane(ModulesPane).table
        assert table.has_focus
        for expected in (1, 2, 3):
            app.post_message(events.Key("j", None))  # as the terminal sends it, no waiting
            await until(pilot, lambda n=expected: table.cursor == n)
        assert app.jobs.current is job and job.done < job.total  # the keys came first
        await pilot.press("escape")
        await until(pilot, lambda: not app.jobs.busy)  # minutes of work left: it was cancelled
        assert any("triage: cancelled" in line for line in app.pane(ReplayLogPane).lines)
        assert app.status_bar.job == ""
        assert not any(s.state == "running" for s in app.book.modules.values())

    drive(app, scenario)


def test_progress_says_the_phase_then_the_time_left() -> None:
    """Before the first result the status line says what takes the time; after two, how
    long the rest should take at the pace so far."""
    from workbench.tui.app import duration

    job = Job("replay", "replay jit_step (snapshot.1)", "m", total=84)
    assert job.time_left(job.started + 80) is None  # nothing evaluated yet
    job.done, job.first_done = 1, job.started + 80
    assert job.time_left(job.started + 90) is None  # one result: no pace yet
    job.done = 16
    left = job.time_left(job.started + 80 + 15 * 10)  # 10 s a step since the first
    assert left == 68 * 10
    assert duration(left) == "11 min" and duration(40) == "40 s"
    assert duration(3900) == "1 h 5 min"


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_status_line_shows_the_phase_and_the_time_left(example: Path, drive, until,
                                                       size: tuple[int, int]) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        job = Job("replay", "replay jit_ln (snapshot.1)", "module_0010", total=38)
        app.jobs.current = job
        app.show_job()
        assert "reading and evaluating the reference" in app.status_bar.job
        job.done, job.first_done = 10, job.started
        job.started -= 100
        job.first_done -= 90
        app.show_job()
        assert " left esc:cancel" in app.status_bar.job and "10/38" in app.status_bar.job
        app.jobs.current = None

    drive(app, scenario, size=size)

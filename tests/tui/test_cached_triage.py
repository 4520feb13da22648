"""A reopened dump shows the badges of its earlier triage at once, from the results cache."""

from __future__ import annotations

import os
from pathlib import Path

from textual.pilot import Pilot

from workbench.cli import main
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.replay_log import ReplayLogPane


def test_reopened_dump_shows_cached_badges_without_evaluating(example: Path, drive,
                                                             until) -> None:
    assert main(["triage", str(example), "--jobs", "0"]) == 1  # fills the user's cache
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: all(app.book.module_status(m.key).state != "none"
                                       for m in app.dump.modules if m.executions))
        states = {m.name: app.book.module_status(m.key) for m in app.dump.modules}
        culprit = "#30 fusion in HLO_passes_after_layout_assignment"  # as the timeline names it
        assert states["jit_ln"].state == "mismatch" and states["jit_ln"].detail == culprit
        assert states["jit_ln"].text == f"✗ failing at {culprit} (cached)"  # not a fresh result
        assert not app.jobs.busy  # nothing was evaluated: no job ran
        await pilot.press("T")  # a triage now takes every result from the cache, and says so
        await until(pilot, lambda: not app.jobs.busy and any(
            "triage done" in line for line in app.pane(ReplayLogPane).lines))
        summary = app.pane(ReplayLogPane).lines[-1]
        assert summary.endswith("(1 failing, 8 ok); 9 from the results cache"), summary

    drive(app, scenario)


def test_empty_cache_shows_no_badges(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await wait(pilot)
        assert {app.book.module_status(m.key).state for m in app.dump.modules} == {"none"}

    drive(app, scenario)


def test_a_cache_others_can_write_is_not_read(example: Path, drive, until,
                                              monkeypatch) -> None:
    """Its badges could be planted: the app says why it does not use it, and shows none."""
    assert main(["triage", str(example), "--jobs", "0"]) == 1  # fills the user's cache
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "workbench"
    folder.chmod(0o777)
    app = WorkbenchApp(example, watch=False)
    notices: list[str] = []
    real_notify = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **kw: (notices.append(message),
                                                              real_notify(message, **kw)))

    async def scenario(pilot: Pilot) -> None:
        await until(pilot, lambda: any("is not safe to use" in n for n in notices))
        assert {app.book.module_status(m.key).state for m in app.dump.modules} == {"none"}

    drive(app, scenario)

"""IREE pane: a capture's summary and records, a background replay, cancel, and failures."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.helpers.patience import wait_for
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.executions import ExecutionsPane
from workbench.tui.panes.iree import NO_CAPTURE, IreePane
from workbench.tui.panes.modules import ModulesPane

TOOLS = ("iree-dump-replay", "iree-run-replay")


@pytest.fixture
def captures(corpus: Path) -> Path:
    return corpus / "iree" / "jit_f"


def log_text(pane: IreePane) -> str:
    return "\n".join(line.text for line in pane.log_view.lines)


async def replay_and_wait(pilot: Pilot, wait) -> None:  # type: ignore[no-untyped-def]  # pytest's fixtures, passed untyped
    await pilot.press("9", "r")
    await wait(pilot)


def test_summary_records_filter_and_replay(captures: Path, drive, wait, lines,
                                           iree_tools: None) -> None:
    app = WorkbenchApp(captures, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        # The tab is hidden: the capture is known but not read until the tab comes up.
        assert pane.capture == captures / "jit_f.ireereplay" and pane.dump is None
        await pilot.press("9")
        await wait(pilot)
        assert pane.dump is not None
        summary = pane.dump.summary
        assert (summary.record_count, summary.object_count, summary.operation_count) == (
            63, 16, 46)
        assert summary.hermetic and summary.scopes == ["init", "execute", "deinit"]
        assert len(pane.table.rows) == 63
        assert "scopes: init, execute, deinit" in str(pane.summary.render())
        assert str(pane.header.render()) == "jit_f.ireereplay · 63 records"

        await pilot.press("9", "slash", *"queue_execute")
        assert [r.ordinal for r in pane.table.rows] == [42, 45, 55]
        assert "3/63 records" in str(pane.header.render())
        await pilot.press("enter")
        assert pane.table.has_focus
        shown = lines(pane.table)
        assert shown[1].split()[:3] == ["42", "execute", "device.queue_execute"]
        await pilot.press("slash", "escape")
        assert len(pane.table.rows) == 63

        await replay_and_wait(pilot, wait)
        assert pane.replay_status is not None and pane.replay_status.state == "ok"
        assert "$ iree-run-replay --device=local-sync jit_f.ireereplay" in log_text(pane)
        assert "✓ jit_f.ireereplay: replay succeeded in" in log_text(pane)
        assert "replay ✓ ok" in str(pane.header.render())

    drive(app, scenario, size=(120, 40))


def test_truncated_capture_fails_and_the_app_keeps_working(captures: Path, drive, wait,
                                                            iree_tools: None) -> None:
    app = WorkbenchApp(captures, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        await pilot.press("9", "2", "j")  # the IREE tab up; Executions: jit_f, then truncated
        await wait(pilot)
        assert app.pane(ExecutionsPane).current.id == "truncated"  # type: ignore[union-attr]  # set by now: the line before waited for it
        assert pane.capture is not None and pane.capture.name == "truncated.ireereplay"
        assert pane.dump is None and pane.table.rows == []
        assert "DATA_LOSS; replay file length extends past file contents" in str(
            pane.summary.render())

        await replay_and_wait(pilot, wait)
        assert pane.replay_status is not None
        assert (pane.replay_status.state, pane.replay_status.detail) == ("error", "DATA_LOSS")
        log = log_text(pane).replace("\n", "")  # the log wraps long lines
        assert "DATA_LOSS; replay file length extends past file contents" in log
        assert "! truncated.ireereplay: replay failed with exit status 1" in log
        assert "replay ! DATA_LOSS" in str(pane.header.render())

        # Everything still works: back to the good capture, which loads and replays.
        await pilot.press("2", "k")
        await wait(pilot)
        assert pane.dump is not None and len(pane.table.rows) == 63
        await replay_and_wait(pilot, wait)
        assert pane.replay_status.state == "ok"
        await pilot.press("1")
        assert app.pane(ModulesPane).table.has_focus

    drive(app, scenario, size=(120, 40))


def test_replay_key_outside_the_pane_hands_a_capture_to_it(captures: Path, drive, until,
                                                            iree_tools: None) -> None:
    app = WorkbenchApp(captures, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        await pilot.press("2", "b")  # no passes to bisect: said, nothing started
        assert pane.replay_status is None and not app.jobs.busy
        await pilot.press("r")  # from Executions, with the IREE tab hidden
        await until(pilot, lambda: pane.replay_status is not None
                    and pane.replay_status.state != "running")
        assert pane.showing and pane.replay_status.state == "ok"  # type: ignore[union-attr]  # set by now: the line before waited for it
        assert "✓ jit_f.ireereplay: replay succeeded in" in log_text(pane)
        assert not app.jobs.busy  # the IREE tool ran, not a step-by-step replay job

    drive(app, scenario, size=(120, 40))


def _fake_run_tool(folder: Path) -> None:
    """An `iree-run-replay` that never ends, to have something to cancel."""
    tool = folder / "iree-run-replay"
    tool.write_text("#!/bin/sh\necho replaying\nsleep 3600\n")
    tool.chmod(0o755)


def test_cancel_and_leaving_stop_the_replay(captures: Path, tmp_path: Path, drive, wait,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_run_tool(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    app = WorkbenchApp(captures, watch=False)
    left_running = []

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        await pilot.press("9", "r")
        process = pane.process
        assert process is not None and pane.replay_status is not None
        assert pane.replay_status.state == "running"
        assert "… running" in str(pane.header.render())
        await pilot.press("x")
        await wait(pilot)
        assert process.finished and process.result is not None
        assert process.result.outcome == "cancelled"
        assert pane.replay_status.detail == "cancelled" and pane.process is None
        assert "replaying" in log_text(pane)  # the tool's output streamed in
        await pilot.press("r")
        left_running.append(pane.process)

    drive(app, scenario)
    (process,) = left_running
    assert process is not None
    wait_for(lambda: process.finished, "the replay tool's end")
    assert process.finished and process.result.outcome == "cancelled"  # type: ignore[union-attr]  # set by now: the line before waited for it


def test_missing_tools_are_named_not_raised(captures: Path, drive, wait,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any(os.path.exists(os.path.join(d, tool)) for tool in TOOLS)]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    # nor beside the interpreter, where the `iree` extra installs them
    monkeypatch.setattr(sys, "executable", os.fspath(captures / "no-env" / "python"))
    monkeypatch.setattr(sysconfig, "get_path", lambda *args, **kwargs: os.fspath(captures))
    app = WorkbenchApp(captures, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        await pilot.press("9")
        await wait(pilot)
        assert "pip install 'dump-triage-workbench[iree]'" in str(pane.summary.render())
        await replay_and_wait(pilot, wait)
        assert "iree-run-replay not found on PATH" in log_text(pane).replace("\n", "")
        assert pane.replay_status is not None
        assert pane.replay_status.detail == "IREE tools missing"
        await pilot.press("2", "j")
        await wait(pilot)
        assert pane.capture is not None and pane.capture.name == "truncated.ireereplay"

    drive(app, scenario)


def test_modules_without_captures(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(IreePane)
        assert app.module is not None and app.module.format == "xla"
        assert pane.capture is None and pane.table.rows == []
        await pilot.press("9")
        shown = lines(pane.table)[1].strip()
        assert shown.startswith("select an IREE capture") and NO_CAPTURE.startswith(
            shown.rstrip("…"))
        await pilot.press("r")
        assert pane.replay_status is None and pane.process is None

    drive(app, scenario)

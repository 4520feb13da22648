"""Snapshots of the main screen at 80x24 and 120x40 (`pytest --snapshot-update` to accept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.timeline import TimelinePane


@pytest.fixture
def app(example: Path, monkeypatch: pytest.MonkeyPatch) -> WorkbenchApp:
    # A relative folder, so the status line reads the same on every machine.
    monkeypatch.chdir(example.parent)
    return WorkbenchApp(Path(example.name), watch=False)


async def on_fusion_step(pilot: Pilot, settle) -> None:  # type: ignore[no-untyped-def]  # pytest's fixtures, passed untyped
    """Settle, then put the timeline cursor on XLA step 0028 (fusion) and focus the timeline."""
    await settle(pilot)
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]  # Pilot.app is typed as a plain App
    await pilot.press("3")
    app.pane(TimelinePane).table.move_to(30)
    await settle(pilot)  # the scrollbars too: settle waits for every message pump


def test_main_screen_80x24(app: WorkbenchApp, snap_compare, wait) -> None:
    assert snap_compare(app, terminal_size=(80, 24),
                        run_before=lambda pilot: on_fusion_step(pilot, wait))


def test_main_screen_120x40(app: WorkbenchApp, snap_compare, wait) -> None:
    assert snap_compare(app, terminal_size=(120, 40),
                        run_before=lambda pilot: on_fusion_step(pilot, wait))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("environ", [{"NO_COLOR": "1"}, {"LC_ALL": "C"}],
                         ids=["no_color", "ascii_locale"])
def test_main_screen_plain_terminals(example: Path, monkeypatch: pytest.MonkeyPatch,
                                     snap_compare, wait, environ: dict[str, str],
                                     size: tuple[int, int]) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(example.parent)
    app = WorkbenchApp(Path(example.name), watch=False)
    assert snap_compare(app, terminal_size=size,
                        run_before=lambda pilot: on_fusion_step(pilot, wait))


def test_notice_over_the_diff_80x24(app: WorkbenchApp, snap_compare, wait) -> None:
    """A notice takes a line of its own above the footer: every line of the diff stays in
    view (a toast floated over its lower right)."""

    async def notice(pilot: Pilot) -> None:
        await on_fusion_step(pilot, wait)
        pilot.app.notify("cancelling… a notice long enough to cross the whole diff pane",
                         severity="warning", timeout=60)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(80, 24), run_before=notice)


def test_recording_that_does_not_fit_80x24(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           snap_compare, wait) -> None:
    """A recording that does not fit its module, said in the Executions pane before `r`."""
    import shutil

    import numpy as np

    dump = Path(__file__).parents[1] / "data" / "xla_gpu" / "linalg_solve"
    recorded = tmp_path / "io"
    shutil.copytree(dump / "io", recorded)
    np.save(recorded / "inputs" / "f.arg1.npy", np.zeros((3, 5, 7), np.int8))
    monkeypatch.chdir(dump.parent)
    app = WorkbenchApp(Path(dump.name), watch=False, recorded=recorded)
    assert snap_compare(app, terminal_size=(80, 24), run_before=wait)

"""Executions pane: the selected module's recorded runs, argument types, recorded result."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from textual.pilot import Pilot

from workbench.loader import load_snapshot
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.executions import ExecutionsPane, value_summary
from workbench.tui.panes.replay_log import ReplayLogPane


def test_executions_follow_the_module(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ExecutionsPane)
        assert [e.id for e in pane.table.rows] == ["snapshot.-17687811"]
        row = lines(pane.table)[1]
        assert row.startswith("snapshot.-17687811")
        assert "f32[6,8], f32[8], f32[8]" in row  # jit_ln(x, g, b)
        snapshot = load_snapshot(app.dump.root, pane.table.rows[0])
        result = np.asarray(snapshot.result)
        arguments, recorded = pane.described[pane.table.rows[0].file]
        assert arguments == "f32[6,8], f32[8], f32[8]"
        assert recorded == f"f32[6,8] in [{result.min():.4g}, {result.max():.4g}]"
        await pilot.press("t")  # show helpers; jit_convert_element_type has two snapshots
        await pilot.press("slash", *"convert", "enter")
        await wait(pilot)
        assert app.module is not None and app.module.name == "jit_convert_element_type"
        assert len(pane.table.rows) == 2

    drive(app, scenario, size=(120, 40))


def test_broken_snapshot_is_named_not_fatal(example: Path, tmp_path: Path, drive, wait,
                                             lines) -> None:
    for file in example.glob("module_0010.*"):
        if file.is_file():
            (tmp_path / file.name).write_bytes(file.read_bytes())
    snapshot = next(tmp_path.glob("*.snapshot.*.pb"))
    snapshot.write_bytes(snapshot.read_bytes()[:100])  # truncated copy
    app = WorkbenchApp(tmp_path, watch=False)

    async def scenario(pilot: Pilot) -> None:
        row = lines(app.pane(ExecutionsPane).table)[1]
        assert "! " in row and "HloSnapshot" in row

    drive(app, scenario, size=(120, 40))


def test_value_summary() -> None:
    assert value_summary(np.array([1.0, np.nan, -2.0], np.float32)) == \
        "f32[3] in [-2, 1], 1 NaN/Inf"
    assert value_summary((np.zeros((2,), np.int32), np.array(True))) == \
        "(s32[2] in [0, 0], pred[] in [1, 1])"


def test_recorded_folder_gives_the_module_an_execution(drive, wait, lines) -> None:
    """`workbench DIR --recorded IO`: a GPU dump without snapshots gets IO's execution."""
    dump = Path(__file__).parents[2] / "data" / "xla_gpu" / "linalg_solve"
    app = WorkbenchApp(dump, watch=False, recorded=dump / "io")

    async def scenario(pilot: Pilot) -> None:
        await wait(pilot)
        pane = app.pane(ExecutionsPane)
        assert [e.id for e in pane.table.rows] == ["recorded f"]
        assert lines(pane.table)[1].startswith("recorded f")

    drive(app, scenario, size=(120, 40))


def test_a_recording_in_the_dump_is_found_without_a_flag(drive, wait, lines) -> None:
    """A run without snapshots that `workbench.record.jax` recorded into the dump's io/."""
    dump = Path(__file__).parents[2] / "data" / "recorded" / "jax_cpu"
    app = WorkbenchApp(dump, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await wait(pilot)
        pane = app.pane(ExecutionsPane)
        assert [e.id for e in pane.table.rows] == ["recorded jit_ln.0"]
        assert lines(pane.table)[1].startswith("recorded jit_ln.0")

    drive(app, scenario, size=(120, 40))


GPU_DUMP = Path(__file__).parents[2] / "data" / "xla_gpu" / "linalg_solve"


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_fake_data_is_said_plainly(tmp_path: Path, drive, until, size: tuple[int, int]) -> None:
    """`b` on a module with no recorded execution says, in the Log and a notice, that it
    runs on fake data and how to give it the real inputs, not only in the job's label."""
    dump = tmp_path / "dump"  # the GPU dump without its recording (io/ would be found)
    shutil.copytree(GPU_DUMP, dump, ignore=shutil.ignore_patterns("io"))
    app = WorkbenchApp(dump, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        log = app.pane(ReplayLogPane)
        await until(pilot, lambda: any("FAKE DATA" in line for line in log.lines))
        said = next(line for line in log.lines if "FAKE DATA" in line)
        assert "--recorded" in said
        assert any("fake data" in str(n.message) for n in app._notifications)
        await until(pilot, lambda: not app.jobs.busy)

    drive(app, scenario, size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_a_recording_that_does_not_fit_is_said_before_r(tmp_path: Path, drive, wait, until,
                                                        size: tuple[int, int]) -> None:
    """A recorded input of the wrong type is said in the Executions pane as soon as the module
    is selected (the mismatching parameter first, both types, what fits after); `r` and `b`
    then refuse it plainly (a notice, the Log) and start no job."""
    recorded = tmp_path / "io"
    shutil.copytree(GPU_DUMP / "io", recorded)
    np.save(recorded / "inputs" / "f.arg1.npy", np.zeros((3, 5, 7), np.int8))
    app = WorkbenchApp(GPU_DUMP, watch=False, recorded=recorded)
    notified: list[str] = []  # as made: a notice leaves the screen after its timeout
    notify = app.notify

    def recording_notify(message: str, **options: Any) -> None:
        notified.append(message)
        notify(message, **options)

    app.notify = recording_notify  # type: ignore[method-assign]  # a test's stand-in for the method

    async def scenario(pilot: Pilot) -> None:
        await wait(pilot)
        pane = app.pane(ExecutionsPane)
        assert pane.fit_text.region.height >= 3  # on screen, below the table
        shown = str(pane.fit_text.render()).splitlines()
        assert shown[0] == "✗ recorded f does not fit jit_f; r and b refuse it:"
        assert shown[1].strip() == ("parameter 1: the module takes f32[64,8], f.arg1.npy "
                                    "holds s8[3,5,7]")
        assert shown[2].strip() == "fits: parameter 0: f32[64,64]"
        assert "✗ does not fit" in pane.described[pane.table.rows[0].file][1]
        for key in ("r", "b"):
            await pilot.press(key)
            assert not app.jobs.busy
        log = app.pane(ReplayLogPane)
        await until(pilot, lambda: sum("not replayed" in line for line in log.lines) == 2)
        assert "parameter 1: the module takes f32[64,8]" in log.lines[-1]
        refusals = [n for n in notified if n.startswith("not replayed: ")]
        assert len(refusals) == 2 and all(n.startswith(
            "not replayed: recorded f does not fit jit_f (parameter 1: the module takes")
            for n in refusals), refusals
        assert app.book.module_status(app.module.key if app.module else "").state == "none"

    drive(app, scenario, size=size)


def test_a_recording_that_fits_shows_its_types(drive, wait, lines) -> None:
    app = WorkbenchApp(GPU_DUMP, watch=False, recorded=GPU_DUMP / "io")

    async def scenario(pilot: Pilot) -> None:
        await wait(pilot)
        pane = app.pane(ExecutionsPane)
        assert pane.described[pane.table.rows[0].file][0] == "f32[64,64], f32[64,8]"
        assert "f32[64,64]" in lines(pane.table)[1]
        assert not pane.has_class("-misfit") and pane.fit_text.region.height == 0

    drive(app, scenario, size=(80, 24))

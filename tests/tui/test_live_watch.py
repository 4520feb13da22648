"""Live watch through the app: files copied into a folder while the app runs show up."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane


def test_files_copied_in_appear_in_modules_and_timeline(
    example: Path, tmp_path: Path, drive, wait, until
) -> None:
    app = WorkbenchApp(tmp_path, watch=True)
    ln_files = sorted(f for f in example.glob("module_0010.*") if f.is_file())
    per_pass = [f for f in ln_files if ".00" in f.name]
    rest = [f for f in ln_files if f not in per_pass]

    async def scenario(pilot: Pilot) -> None:
        modules = app.pane(ModulesPane).table
        timeline = app.pane(TimelinePane).table
        assert modules.rows == []
        assert app.watcher is not None  # armed on mount, before this runs
        for file in rest:
            shutil.copy(file, tmp_path)
        await until(pilot, lambda: [m.name for m in modules.rows] == ["jit_ln"])
        await until(pilot, lambda: len(timeline.rows) == 2)  # before and after optimizations
        for file in per_pass[: len(per_pass) // 2]:
            shutil.copy(file, tmp_path)
        await until(pilot, lambda: len(timeline.rows) == 2 + 18)
        for file in per_pass[len(per_pass) // 2:]:
            shutil.copy(file, tmp_path)
        await until(pilot, lambda: len(timeline.rows) == 2 + 36)
        assert [s.xla_step for s in timeline.rows[1:-1]] == list(range(36))
        await wait(pilot)
        assert app.step_facts(timeline.rows[1 + 28]).changed is True

        (tmp_path / per_pass[0].name).unlink()  # the text of step 0000 (its proto stays)
        (tmp_path / per_pass[1].name).unlink()
        await until(pilot, lambda: len(timeline.rows) == 2 + 35)

    drive(app, scenario)

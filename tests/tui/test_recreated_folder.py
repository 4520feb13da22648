"""The IR pane follows its folder: deleted, it shows nothing of it; recreated with other
contents under the same names, it shows the new contents."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.modules import ModulesPane


def _shown(app: WorkbenchApp) -> str:
    rows = app.pane(DiffPane).view.document.rows
    return "\n".join(r.text if not isinstance(r, tuple) else r[1].text for r in rows)


def test_the_ir_pane_follows_a_deleted_and_recreated_folder(example: Path, tmp_path: Path,
                                                            drive, until) -> None:
    folder = tmp_path / "dump"
    originals = sorted(example.glob("module_0010.*after_optimizations*.txt"))
    assert originals
    folder.mkdir()
    for file in originals:
        shutil.copy(file, folder)
    app = WorkbenchApp(folder, watch=True)

    async def scenario(pilot: Pilot) -> None:
        modules = app.pane(ModulesPane).table
        await until(pilot, lambda: [m.name for m in modules.rows] == ["jit_ln"])
        app.select_module(modules.rows[0].key)
        await until(pilot, lambda: "rsqrt" in _shown(app))
        shutil.rmtree(folder)
        await until(pilot, lambda: modules.rows == [])
        await until(pilot, lambda: "rsqrt" not in _shown(app))
        folder.mkdir()
        for file in originals:  # the same names, other contents
            (folder / file.name).write_text(file.read_text().replace("rsqrt", "sqrt"))
        await until(pilot, lambda: [m.name for m in modules.rows] == ["jit_ln"])
        app.select_module(modules.rows[0].key)
        await until(pilot, lambda: "sqrt(" in _shown(app))
        assert "rsqrt" not in _shown(app)

    drive(app, scenario)

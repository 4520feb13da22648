"""Live watch through the app: files copied into a folder while the app runs show up; a file
being written is marked, and its completion keeps the user's place."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench import watch
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane
from workbench.watch import SettlingQueue, WatchdogWatcher


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


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_a_step_being_written_is_marked_and_completing_keeps_the_place(
        example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drive, wait, until,
        size: tuple[int, int]) -> None:
    """The first scan finds step 0028's text half-written and the writer goes on: its row
    shows ✎ until the file settles; then the step is read again and neither the timeline's
    cursor nor the diff's scroll moves. The writer's pace is the settling queue's quiet time:
    an hour while it writes (nothing settles), the usual once it has finished."""
    queue = SettlingQueue(quiet=3600.0)
    monkeypatch.setattr(watch, "WatchdogWatcher",
                        lambda root, only=None: WatchdogWatcher(root, only=only, queue=queue))
    for file in example.glob("module_0010.*"):
        if file.is_file():
            shutil.copy(file, tmp_path)
    written = next(tmp_path.glob("module_0010.jit_ln.0028.*.txt"))
    text = written.read_text()
    cut = [i for i, char in enumerate(text) if char == "\n"]
    first, second = cut[len(cut) // 2] + 1, cut[3 * len(cut) // 4] + 1
    written.write_text(text[:first])
    app = WorkbenchApp(tmp_path, watch=True)

    async def scenario(pilot: Pilot) -> None:
        timeline = app.pane(TimelinePane).table
        diff = app.pane(DiffPane)
        await until(pilot, lambda: len(timeline.rows) == 2 + 36)
        row = next(i for i, step in enumerate(timeline.rows) if step.xla_step == 28)
        timeline.move_to(row)
        await wait(pilot)
        await pilot.press("4")
        await until(pilot, lambda: diff.shown_step is not None and diff.view.document.hunks)
        half_rows = len(diff.view.document.rows)
        diff.view.scroll_to(y=5, animate=False, immediate=True)
        await pilot.pause()

        def row_text() -> str:
            """Step 0028's row as the timeline draws it (line 0 is the header)."""
            shown = timeline.render_line(row - int(timeline.scroll_offset.y) + 1).text
            assert shown.split()[0] == str(row)
            return shown

        assert "✎" not in row_text()
        with written.open("a") as handle:  # the writer goes on: the file is still incomplete
            handle.write(text[first:second])
        await until(pilot, lambda: "✎" in row_text())
        assert written.name in app.writing

        with written.open("a") as handle:  # and finishes
            handle.write(text[second:])
        queue.quiet = 0.15
        await until(pilot, lambda: not app.writing and len(diff.view.document.rows) > half_rows)
        await wait(pilot)
        assert "✎" not in row_text()
        assert timeline.cursor == row and app.step is not None and app.step.xla_step == 28
        assert diff.view.scroll_offset.y == 5 and app.focused is diff.view
        shown = "\n".join(line.text for line in diff.view.document.rows)
        assert text.splitlines()[-2].strip() in shown  # the end of the file, now complete

    drive(app, scenario, size)

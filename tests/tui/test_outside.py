"""`P` opens the diff (or the step's IR) in $PAGER, `E` a read-only copy of the step's file in
$EDITOR, with the app suspended; the tool is a script recording what it was given."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.outside import editor_command, tool_command
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.timeline import TimelinePane

RECORDER = """#!/bin/sh
printf '%s\\n' "$@" > {record}.args
for file in "$@"; do :; done
cat "$file" > {record}.text
stat -c %a "$file" > {record}.mode
"""


@pytest.fixture
def recorder(tmp_path: Path) -> Path:
    """A pager or editor that records its arguments, the file's text and its permission bits;
    `record` with suffixes .args, .text, .mode."""
    script = tmp_path / "tool.sh"
    script.write_text(RECORDER.format(record=tmp_path / "record"))
    script.chmod(0o755)
    return script


@pytest.fixture
def can_suspend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The headless terminal hands itself over as a real one does (Textual's own suspend and
    resume run; the headless driver's mode changes do nothing)."""
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))


def folder_state(folder: Path) -> dict[str, tuple[int, float]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime) for p in folder.rglob("*")}


async def on_fusion_step(pilot: Pilot, wait) -> None:  # type: ignore[no-untyped-def]  # pytest's fixtures, passed untyped
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]  # Pilot.app is typed as a plain App
    await pilot.press("3")
    app.pane(TimelinePane).table.move_to(30)
    await wait(pilot)
    await pilot.press("4")


def test_p_pages_the_diff_and_the_app_comes_back(
    example: Path, recorder: Path, drive, wait, until, can_suspend, monkeypatch
) -> None:
    monkeypatch.setenv("PAGER", f"{recorder} --flag")
    record = recorder.parent / "record"
    before = folder_state(example)
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await on_fusion_step(pilot, wait)
        await until(pilot, lambda: app.pane(DiffPane).diff is not None)
        await pilot.press("P")
        await until(pilot, lambda: record.with_suffix(".mode").exists())
        args = record.with_suffix(".args").read_text().splitlines()
        assert args[0] == "--flag" and args[1].endswith(".diff")
        assert not Path(args[1]).exists()  # the temporary copy is gone
        text = record.with_suffix(".text").read_text()
        assert text.startswith("--- 0027 ") and "\n+++ 0028 fusion" in text and "\n@@ " in text
        assert record.with_suffix(".mode").read_text().strip() == "444"  # read-only to all
        assert app.is_running and app.focused is app.pane(DiffPane).view

    drive(app, scenario)
    assert folder_state(example) == before


def test_e_opens_a_read_only_copy_of_the_step_file(
    example: Path, recorder: Path, drive, wait, until, can_suspend, monkeypatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(recorder))
    record = recorder.parent / "record"
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await on_fusion_step(pilot, wait)
        await pilot.press("E")
        await until(pilot, lambda: record.with_suffix(".mode").exists())
        step = app.pane(DiffPane).request.step
        assert step.text is not None
        args = record.with_suffix(".args").read_text().splitlines()
        assert args == [args[0]] and Path(args[0]).name == Path(step.text.file).name
        assert Path(args[0]).parent != example
        original = (example / step.text.file).read_text()
        assert record.with_suffix(".text").read_text() == original
        assert record.with_suffix(".mode").read_text().strip() == "444"  # read-only to all

    drive(app, scenario)


def test_a_pager_that_cannot_run_is_said(
    example: Path, drive, wait, until, can_suspend, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PAGER", str(tmp_path / "no-such-pager"))
    app = WorkbenchApp(example, watch=False)
    said: list[str] = []
    app.notify = lambda message, **kw: said.append(message)  # type: ignore[method-assign]  # a test's stand-in for the method

    async def scenario(pilot: Pilot) -> None:
        await on_fusion_step(pilot, wait)
        await pilot.press("P")
        await until(pilot, lambda: any("cannot run" in m for m in said))
        assert app.is_running

    drive(app, scenario)


def test_tool_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAGER", raising=False)
    assert tool_command("PAGER", "less") == ["less"]
    monkeypatch.setenv("PAGER", "  ")
    assert tool_command("PAGER", "less") == ["less"]
    monkeypatch.setenv("PAGER", "less -R")
    assert tool_command("PAGER", "less") == ["less", "-R"]
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "/usr/bin/vim")
    assert editor_command() == ["/usr/bin/vim", "-R"]
    monkeypatch.setenv("VISUAL", "nvim -R")
    assert editor_command() == ["nvim", "-R"]
    monkeypatch.setenv("VISUAL", "code --wait")
    assert editor_command() == ["code", "--wait"]  # no read-only flag known: the copy is read-only

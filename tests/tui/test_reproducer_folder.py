"""`W` asks where to write the reproducer (pre-filled: `./workbench-repro-<module>-<step>-<pass>`,
then beside the last one), refuses a folder inside the dump or one with files in it and says
why, writes where it was told; `O` opens what it wrote in the app."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from workbench.tui import outside
from workbench.tui.app import WorkbenchApp
from workbench.tui.folder_prompt import FolderPrompt
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.replay_log import ReplayLogPane

RECORDER = """#!/bin/sh
printf '%s\\n' "$@" > {record}
"""
PROPOSED = "workbench-repro-jit_ln-0028-fusion"


@pytest.fixture
def opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The second workbench `O` starts is a script writing its arguments to the file returned;
    the headless terminal hands itself over as a real one does."""
    record = tmp_path / "opened.args"
    script = tmp_path / "workbench.sh"
    script.write_text(RECORDER.format(record=record))
    script.chmod(0o755)
    monkeypatch.setattr(outside, "workbench_command", lambda: [str(script)])
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    return record


async def submit(pilot: Pilot, prompt: FolderPrompt, text: str) -> None:
    prompt.box.value = text
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_w_asks_for_the_folder_and_o_opens_it(example: Path, tmp_path: Path, opened: Path,
                                              drive, wait, until, lines,
                                              monkeypatch: pytest.MonkeyPatch,
                                              size: tuple[int, int]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    full = work / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        log = app.pane(ReplayLogPane)
        await pilot.press("O")  # nothing written yet: said, nothing run
        assert not opened.exists()
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        await pilot.press("L")
        await until(pilot, lambda: app.localize_control.localizations and not app.jobs.busy)
        await wait(pilot)
        await pilot.press("W")
        await until(pilot, lambda: isinstance(app.screen, FolderPrompt))
        prompt = app.screen
        assert isinstance(prompt, FolderPrompt)
        assert prompt.box.value == str(work / PROPOSED)  # in the current folder
        # Inside the dump: refused, said, the prompt stays.
        await submit(pilot, prompt, str(example / "repro"))
        assert app.screen is prompt and prompt.refusal.region.height > 0
        said = str(prompt.refusal.render())
        assert "inside the dump folder" in said and "never writes into a dump" in said
        assert not (example / "repro").exists()
        # A folder with files in it: refused, nothing written into it.
        await submit(pilot, prompt, "full")
        assert app.screen is prompt and "full is not empty" in str(prompt.refusal.render())
        assert [p.name for p in full.iterdir()] == ["notes.txt"]
        # A new folder, typed relative to the current one.
        await submit(pilot, prompt, "mine/repro")
        assert app.screen is not prompt
        await until(pilot, lambda: any("wrote " in line for line in log.lines)
                    and not app.jobs.busy)
        written = work / "mine" / "repro"
        assert any(f"wrote {written} " in line for line in log.lines)
        assert (written / "README.txt").is_file()
        await until(pilot, lambda: any("O opens it" in text for text in app.notice_line.texts))
        # The next proposal is beside it; escape writes nothing.
        await pilot.press("W")
        await until(pilot, lambda: isinstance(app.screen, FolderPrompt))
        second = app.screen
        assert isinstance(second, FolderPrompt)
        assert second.box.value == str(work / "mine" / PROPOSED)
        await pilot.press("escape")
        assert not isinstance(app.screen, FolderPrompt)
        assert sorted(p.name for p in (work / "mine").iterdir()) == ["repro"]
        # O: a second workbench on the folder written.
        await pilot.press("O")
        await until(pilot, opened.exists)
        assert opened.read_text().splitlines() == [str(written)]

    drive(app, scenario, size=size)

    # What O hands the second workbench is a folder the app reads: its module and steps.
    reopened = WorkbenchApp(work / "mine" / "repro", watch=False)

    async def listed(pilot: Pilot) -> None:
        rows = lines(reopened.pane(ModulesPane).table)
        assert any("jit_ln" in row for row in rows), rows
        assert reopened.module is not None and len(reopened.module.steps) >= 2
        assert reopened.module.executions

    drive(reopened, listed, size=size)

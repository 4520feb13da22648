"""After a bisection, `L` names the culprit instruction (log, diff marks) and `W` writes the
reducer's folder, on layernorm-broken-fusion."""

from __future__ import annotations

import re
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.cli import main
from workbench.replay.localize.text import defines
from workbench.tui.app import WorkbenchApp
from workbench.tui.folder_prompt import FolderPrompt
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.replay_log import ReplayLogPane


async def write_reproducer(pilot: Pilot, app: WorkbenchApp,
                           until: Callable[..., Awaitable[None]], written: list[Path]) -> str:
    """Press `W`, take the folder it proposes (in the current folder, a test's own), wait for
    the log line saying where the folder went, note the folder."""
    await pilot.press("W")
    await until(pilot, lambda: isinstance(app.screen, FolderPrompt))
    await pilot.press("enter")
    await until(pilot, lambda: any("wrote " in line for line in app.pane(ReplayLogPane).lines)
                and not app.jobs.busy)
    line = next(x for x in app.pane(ReplayLogPane).lines if "wrote " in x)
    match = re.search(r"wrote (\S+) ", line)
    assert match is not None
    written.append(Path(match.group(1)))
    return line


def test_localize_then_write_reproducer(example: Path, drive, wait, until, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where W proposes to write
    app = WorkbenchApp(example, watch=False)
    localizations = app.localize_control.localizations
    written: list[Path] = []

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("L")  # nothing bisected yet: says what to do, starts nothing
        assert not app.jobs.busy and not localizations
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        await pilot.press("L")
        await until(pilot, lambda: "module_0010" in localizations and not app.jobs.busy)
        await wait(pilot)
        log = app.pane(ReplayLogPane).lines
        assert any("culprit instruction: rsqrt.2 (sqrt) in fused_computation.1" in line
                   for line in log)
        assert any("source:  program.py:4" in line for line in log)
        assert any("first differing elements" in line for line in log)
        diff = app.pane(DiffPane)
        assert diff.raw and app.step is not None and app.step.xla_step == 28
        finding = str(diff.finding_text.render())  # the report is on screen too, above the diff
        assert diff.finding.display and diff.finding.region.height > 1
        assert "culprit instruction: rsqrt.2" in finding and "program.py:4" in finding
        marked = [diff.view.document.rows[i] for i in sorted(diff.view.marked)]
        texts = [half.text for row in marked
                 for half in (row if isinstance(row, tuple) else (row,))]
        assert any(defines(t, "rsqrt.2") for t in texts)  # the new version
        assert any(defines(t, "rsqrt.0") for t in texts)  # and the old one
        assert diff.view.current_row in diff.view.marked
        line = await write_reproducer(pilot, app, until, written)
        assert "reproduces: mismatch, pass fusion" in line
        # The modules, the inputs, a README, and the bug report for XLA's tools.
        assert len(list(written[0].iterdir())) == 5
        assert any(f"bug report for XLA's tools: {written[0] / 'bug-report'}" in logged
                   for logged in app.pane(ReplayLogPane).lines)
        assert "run_hlo_module" in (written[0] / "bug-report" / "README.md").read_text()
        assert example.resolve() not in written[0].resolve().parents
        readme = (written[0] / "README.txt").read_text()
        assert f"workbench bisect {written[0]} jit_ln" in readme
        command = re.search(r"workbench (diff .*)", readme)
        assert command is not None and main(command.group(1).split()) == 1  # runs: they differ

    try:
        drive(app, scenario)
    finally:
        for folder in written:
            shutil.rmtree(folder, ignore_errors=True)


def test_localize_an_mlir_trace(drive, wait, until, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """On the xDSL example the same keys name the op the faulty pass rewrote and write its
    reduced pair."""
    monkeypatch.chdir(tmp_path)
    example = Path(__file__).parents[2] / "examples" / "xdsl-faulty-pass"
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit)
        await wait(pilot)
        await pilot.press("L")
        await until(pilot, lambda: app.localize_control.localizations and not app.jobs.busy)
        await wait(pilot)
        log = app.pane(ReplayLogPane).lines
        assert any("culprit instruction: %scaled (arith.addf) in @main" in line for line in log)
        marked = [app.pane(DiffPane).view.document.rows[i]
                  for i in sorted(app.pane(DiffPane).view.marked)]
        texts = [half.text for row in marked
                 for half in (row if isinstance(row, tuple) else (row,))]
        assert any("arith.addf %relu, %relu" in t for t in texts)
        line = await write_reproducer(pilot, app, until, written)
        assert "(2 and 1 ops; reproduces: mismatch, pass StrengthReduceMultiplyPass)" in line

    written: list[Path] = []
    try:
        drive(app, scenario)
    finally:
        for folder in written:
            shutil.rmtree(folder, ignore_errors=True)


def test_localize_after_a_triage(example: Path, drive, wait, until) -> None:
    """`L` starts from the culprit a triage (T) found, as it does after a bisection."""
    app = WorkbenchApp(example, watch=False)
    localizations = app.localize_control.localizations

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("T")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        assert "module_0010" in app.verdicts
        await pilot.press("L")
        await until(pilot, lambda: "module_0010" in localizations and not app.jobs.busy)
        assert any("culprit instruction: rsqrt.2 (sqrt) in fused_computation.1" in line
                   for line in app.pane(ReplayLogPane).lines)

    drive(app, scenario)

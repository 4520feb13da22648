"""`y` copies the last finding (OSC 52 through Textual, kept in `app.clipboard` too): the
verdict after `b`, the instruction after `L`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp


def test_y_copies_the_verdict_then_the_instruction(example: Path, drive, wait, until) -> None:
    app = WorkbenchApp(example, watch=False)
    sent: list[str] = []
    app.copy_to_clipboard = lambda text: (sent.append(text),  # type: ignore[method-assign]  # a test's stand-in for the method
                                          WorkbenchApp.copy_to_clipboard(app, text))

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("y")  # nothing found yet: says what to do, copies nothing
        assert sent == []
        await pilot.press("b")
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        await pilot.press("y")
        assert ": mismatch: " in sent[-1] and "0028 fusion" in sent[-1], sent
        assert app.clipboard == sent[-1]
        await pilot.press("L")
        await until(pilot, lambda: "module_0010" in app.localize_control.localizations
                    and not app.jobs.busy)
        await pilot.press("y")
        assert sent[-1].startswith("culprit instruction: rsqrt.2 (sqrt)")
        assert "op_name:" in sent[-1] and "program.py:4" in sent[-1]

    drive(app, scenario)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_y_also_writes_a_file_and_says_where(example: Path, drive, size: tuple[int, int],
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Under tmux's default setting OSC 52 never arrives, and the app cannot tell: what `y`
    copies is also written to a file outside the dump, and the notice names it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        app.offer_copy("module_0010 jit_ln: mismatch: first failing step 0028 fusion")
        await pilot.press("y")
        await pilot.pause()
        kept = tmp_path / "cache" / "workbench" / "copied.txt"
        assert kept.read_text(encoding="utf-8") == app.copyable + "\n"
        notices = [str(n.message) for n in app._notifications]
        assert any(str(kept) in n and "OSC 52" in n for n in notices), notices
        assert not any(n.startswith("copied:") for n in notices)

    drive(app, scenario, size=size)

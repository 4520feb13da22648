"""Under a locale that is not UTF-8 every glyph on screen is ASCII, cell for cell."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.glyphs import ASCII_GLYPHS, to_ascii, wants_ascii


@pytest.mark.parametrize(("environ", "ascii"), [
    ({"LC_ALL": "C"}, True),
    ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, True),  # LC_ALL decides
    ({"LC_ALL": "", "LC_CTYPE": "en_US.utf8"}, False),
    ({"LANG": "C.UTF-8"}, False),
    ({"LANG": "POSIX"}, True),
    ({}, True),  # nothing set is the C locale
])
def test_which_locales_get_ascii(environ: dict[str, str], ascii: bool) -> None:
    assert wants_ascii(environ) is ascii


def test_every_glyph_keeps_its_width() -> None:
    for glyph, stand_in in ASCII_GLYPHS.items():
        assert stand_in.isascii() and cell_len(stand_in) == cell_len(glyph), glyph
    assert to_ascii("✗ failing at fusion · 3 …") == "x failing at fusion . 3 ~"
    assert to_ascii("名") == "??"  # a wide character keeps its two cells


def test_c_locale_draws_ascii_only(example: Path, drive, wait, until,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "C")
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("b")  # the culprit's badge, marks and the diff: glyphs everywhere
        await until(pilot, lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        await wait(pilot)
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        text = "\n".join(lines)
        assert text.isascii(), sorted({c for c in text if not c.isascii()})
        assert "Modules" in text and "#30 fusion vs #29" in text
        assert any(line.startswith("x 0010") for line in lines)  # the failing badge, as x

    drive(app, scenario, size=(120, 40))

"""The picture of the app in the README and on the site is current: made again here by the
script that made it (the app's own SVG export), it shows the same screen."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_screenshot",
                                                  ROOT / "docs" / "make_screenshot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_screenshot_is_current() -> None:
    make = script()
    made = make.normalized(make.screenshot_svg())
    # What the picture must show: the culprit pass of the example, found by bisection.
    assert "fusion" in made and "jit_ln" in made and "✗" in made
    kept = make.normalized(make.PICTURE.read_text(encoding="utf-8"))
    assert kept == made, "run `python docs/make_screenshot.py`"


def test_the_readme_and_the_site_show_it() -> None:
    assert "docs/images/app.svg" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "images/app.svg" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_normalizing_keeps_what_the_screen_shows() -> None:
    make = script()
    assert make.normalized('<g class="terminal-123-r1">x</g>') == '<g class="terminal-r1">x</g>'
    assert make.normalized(">✗ fusion<") != make.normalized(">✓ fusion<")

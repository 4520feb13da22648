"""Themes: shipped files load, broken files are reported, --theme and the switch key work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.themes import load_theme_argument, load_themes, parse_theme

THEMES = Path(__file__).parents[2] / "themes"


def test_shipped_themes_load() -> None:
    themes, errors = load_themes()
    assert errors == []
    names = {theme.name for theme in themes}
    assert {"dark", "light", "mono"} <= names
    assert {p.stem for p in THEMES.glob("*.json")} <= names
    mono = next(t for t in themes if t.name == "mono")
    # High contrast: pure black and white, every status colour a shade of grey.
    assert (mono.background, mono.foreground) == ("#000000", "#ffffff")
    for colour in (mono.error, mono.success, mono.warning, mono.accent, mono.primary):
        assert colour is not None and len({colour[1:3], colour[3:5], colour[5:7]}) == 1


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{", "not JSON"),
        ("[]", "one JSON object"),
        ('{"name": "x"}', "`primary` colour is required"),
        ('{"primary": "blurple"}', "`primary` is not a colour"),
        ('{"primary": "#fff", "colour": "#000"}', "unknown fields: colour"),
        ('{"primary": "#fff", "dark": "yes"}', "`dark` must be true or false"),
        ('{"primary": "#fff", "variables": {"a": 1}}', "`variables` must map"),
    ],
)
def test_broken_theme_files_say_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_theme(text, "t.json")


def test_user_themes_and_broken_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "workbench" / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.json").write_text(json.dumps({"primary": "#ff0000", "dark": False}))
    (folder / "broken.json").write_text("{")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    themes, errors = load_themes()
    assert "mine" in {t.name for t in themes}
    assert [(Path(e.file).name, e.reason.split(":")[0]) for e in errors] == [
        ("broken.json", "not JSON")]


def test_theme_argument(tmp_path: Path) -> None:
    assert load_theme_argument("light") == "light"
    path = tmp_path / "t.json"
    path.write_text('{"name": "t", "primary": "#123456"}')
    theme = load_theme_argument(str(path))
    assert not isinstance(theme, str) and theme.name == "t"
    path.write_text("{")
    with pytest.raises(ValueError, match="t.json: not JSON"):
        load_theme_argument(str(path))


def test_theme_option_and_switch_key(example: Path, drive) -> None:
    app = WorkbenchApp(example, theme="mono", watch=False)

    async def scenario(pilot: Pilot) -> None:
        assert app.theme == "mono"
        seen = [app.theme]
        for _ in range(3):
            await pilot.press("ctrl+t")
            seen.append(app.theme)
        assert seen[-1] == "mono" and {"dark", "light"} <= set(seen)

    drive(app, scenario)

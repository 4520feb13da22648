"""Themes: JSON files in the shipped `themes/` folder and in the user's config folder.

A theme file holds the fields of `textual.theme.Theme` (name, dark, primary, ..., variables).
Files are validated on load; a broken file becomes a `ThemeError` naming the file and the
reason (shown to the user), never a crash. The shipped folder is installed as the
`workbench.themes` package data, so `pip install .` carries it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

COLOUR_FIELDS = ("primary", "secondary", "accent", "warning", "error", "success",
                 "foreground", "background", "surface", "panel", "boost")
OTHER_FIELDS = ("name", "dark", "variables", "description", "luminosity_spread", "text_alpha")
DEFAULT_THEME = "dark"
SHIPPED_ORDER = ("dark", "light", "mono")  # the order the theme key cycles through


@dataclass(frozen=True)
class ThemeError:
    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


def user_theme_folder() -> Path:
    """Where users put their own theme files ($XDG_CONFIG_HOME/workbench/themes)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "workbench" / "themes"


def parse_theme(text: str, file: str) -> Theme:
    """A `Theme` from a theme file's text. Raises ValueError with the reason."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise ValueError("a theme file holds one JSON object")
    unknown = sorted(set(data) - set(COLOUR_FIELDS) - set(OTHER_FIELDS))
    if unknown:
        raise ValueError(f"unknown fields: {', '.join(unknown)}")
    name = data.get("name") or Path(file).stem
    if not isinstance(name, str):
        raise ValueError("`name` must be a string")
    if "primary" not in data:
        raise ValueError("`primary` colour is required")
    colours = {}
    for field in COLOUR_FIELDS:
        if field in data:
            value = data[field]
            try:
                Color.parse(value)
            except (ColorParseError, TypeError):
                raise ValueError(f"`{field}` is not a colour: {value!r}") from None
            colours[field] = value
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ValueError("`variables` must map names to strings")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ValueError("`dark` must be true or false")
    return Theme(name=name, dark=dark, variables=dict(variables), **colours)


def load_themes() -> tuple[list[Theme], list[ThemeError]]:
    """Every theme that loads (shipped first, then the user's), and an error for each file
    that does not."""
    themes: list[Theme] = []
    errors: list[ThemeError] = []
    shipped = resources.files("workbench.themes")
    sources = [(f"themes/{entry.name}", entry) for entry in
               sorted(shipped.iterdir(), key=lambda e: e.name) if entry.name.endswith(".json")]
    user = user_theme_folder()
    if user.is_dir():
        sources.extend((str(path), path) for path in sorted(user.glob("*.json")))
    for file, source in sources:
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            errors.append(ThemeError(file, f"cannot read: {error}"))
            continue
        try:
            themes.append(parse_theme(text, file))
        except ValueError as error:
            errors.append(ThemeError(file, str(error)))
    return themes, errors


def load_theme_argument(value: str) -> Theme | str:
    """`--theme` takes a theme name or a path to a theme file: a Theme for a file, else the
    name. Raises ValueError naming the file when the file is broken."""
    path = Path(value)
    if value.endswith(".json") or path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"{value}: cannot read theme file: {error}") from None
        try:
            return parse_theme(text, value)
        except ValueError as error:
            raise ValueError(f"{value}: {error}") from None
    return value

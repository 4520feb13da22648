"""Strings from a dump are data: shown as they are, never as markup or terminal control codes.

A file name, module name, pass name, MLIR symbol or an error quoting IR can hold anything:
`[bold]` or `[@click=app.quit]` (Rich and Textual markup), or `ESC ] 0 ; title BEL` (a terminal
escape that retitles the window or clears the screen). Everything the workbench prints or
draws that came from a dump goes through one of these:

- `visible(text)`: control characters as visible symbols (ESC as `␛`, the C0 controls as their
  Unicode "control pictures", DEL as `␡`, C1 controls as `\\x9b`), for plain output;
- `markup(text)`: `visible` and escaped for Rich markup, for a CLI's markup string;
- `plain(text)`: a Rich `Text` of `visible(text)`, for a table cell, a widget, a title.

Newlines and tabs stay where a text is many lines (`lines=True`): IR, logs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ ... ␟ (␛ for ESC)
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}"  # C1 controls have no pictures


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control character shown as a visible symbol (newlines and tabs
    kept when `lines`)."""
    pattern = _CONTROLS_BUT_LINES if lines else _CONTROLS
    return pattern.sub(_picture, text)


def markup(text: str, *, lines: bool = False) -> str:
    """`text` made safe to put inside a Rich markup string (the CLI's consoles): tags escaped
    and trailing backslashes doubled, so nothing in it opens, closes or escapes a tag (a
    backslash right before a bracket may show doubled: Rich has no exact escape for it).
    Textual reads markup differently: the app passes `plain(...)`, or Textual's own
    `Content.from_markup(template, name=value)`, never markup built from a name."""
    from rich.markup import escape

    escaped = escape(visible(text, lines=lines).rstrip("\\"))
    return escaped + "\\" * (2 * (len(text) - len(text.rstrip("\\"))))


def plain(text: str, style: str = "", *, lines: bool = False) -> Text:
    """`text` as a Rich `Text`: never parsed as markup, control characters visible."""
    from rich.text import Text

    return Text(visible(text, lines=lines), style=style)

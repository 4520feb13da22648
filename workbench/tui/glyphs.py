"""Glyphs for terminals that cannot show UTF-8 (`LANG=C`, `LC_ALL=C`, a serial console).

One table maps every glyph the app and Textual draw (badges, marks, rules, bars, the tab
underline, scrollbars) to one ASCII character of the same width, and a line filter applies it
to everything drawn, so no widget needs an ASCII variant of its own. Any other character
outside ASCII (from a dump's names, say) becomes `?` for each cell it takes.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

ASCII_GLYPHS: dict[str, str] = {
    "✓": "+", "✗": "x", "…": "~", "·": ".", "●": "*", "○": "o", "?": "?", "!": "!",
    "▏": "|", "▕": "|", "│": "|", "┃": "|", "▎": "|", "▍": "|", "▌": "|", "▋": "|", "▊": "|",
    "▉": "#", "█": "#", "░": "-", "▒": "-", "▓": "#",
    "─": "-", "━": "-", "╸": "-", "╺": "-", "╴": "-", "╶": "-", "▔": "-", "▁": "_", "▂": "_",
    "▃": "_", "▄": "_", "▅": "=", "▆": "=", "▇": "=",
    "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+", "┬": "+", "┴": "+", "┼": "+",
    "╭": "+", "╮": "+", "╰": "+", "╯": "+", "▲": "^", "▼": "v", "▶": ">", "◀": "<",
    "→": ">", "←": "<", "Δ": "d", "≈": "~", "±": "+", "✎": "~",
}


def _ascii(char: str) -> str:
    if char < "\x80":
        return char
    return ASCII_GLYPHS.get(char) or "?" * max(cell_len(char), 1)


def to_ascii(text: str) -> str:
    """`text` with every glyph replaced by its ASCII stand-in, cell for cell."""
    if text.isascii():
        return text
    return "".join(_ascii(char) for char in text)


def wants_ascii(environ: Mapping[str, str]) -> bool:
    """Whether the locale is not UTF-8: the first of LC_ALL, LC_CTYPE, LANG that is set
    decides (as in POSIX); none set is the C locale. Python's own encoding does not tell:
    it switches itself to UTF-8 under the C locale (PEP 538, PEP 540)."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = environ.get(name)
        if value:
            return "utf-8" not in value.lower() and "utf8" not in value.lower()
    return True


class AsciiGlyphs(LineFilter):
    """Draws every line through `to_ascii`."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [Segment(to_ascii(text), style, control) for text, style, control in segments]

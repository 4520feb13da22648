"""Strings from a dump are data: shown as they are, never as markup or terminal control codes.

A file name, module name, pass name, MLIR symbol or an error quoting IR can hold anything:
`[bold]` or `[@click=app.quit]` (Rich and Textual markup), or `ESC ] 0 ; title BEL` (a terminal
escape that retitles the window or clears the screen). Everything the workbench prints or
draws that came from a dump goes through one of these:

- `visible(text)`: control characters as visible symbols, one for one (ESC as `␛`, the C0
  controls as their Unicode "control pictures", DEL as `␡`, C1 controls, which have no
  pictures, as `�`, and so the bytes 0x80-0x9f of a name that is not UTF-8), for plain
  output; as long as the text, so styles keep their places;
- `markup(text)`: `visible` and escaped for Rich markup, for a CLI's markup string;
- `plain(text)`: a Rich `Text` of `visible(text)`, for a table cell, a widget, a title.

Newlines and tabs stay where a text is many lines (`lines=True`): IR, logs.

And at the sinks, whatever a site forgot: a command's standard streams are `VisibleWriter`s
(`visible_standard_streams`), and its Rich consoles (`terminal_console`) show the control
characters of every text they print visibly, their own styling untouched.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console, RenderHook
    from rich.text import Text

# Controls, and the bytes 0x80-0x9f of a name that is not UTF-8 (Python hands them over as
# the lone surrogates U+DC80-U+DC9F and prints them back as those bytes, which an 8-bit
# terminal takes as C1 controls: 0x9b is CSI).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udc9f]")
_CONTROLS_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udc9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ ... ␟ (␛ for ESC)
    if code == 0x7F:
        return "␡"
    return "\ufffd"  # C1 controls (0x80-0x9f) have no pictures, nor their raw bytes


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control character shown as a visible symbol (newlines and tabs
    kept when `lines`)."""
    pattern = _CONTROLS_BUT_LINES if lines else _CONTROLS
    return pattern.sub(_picture, text)


_UNDECODABLE = re.compile("[\udc80-\udcff]")


def on_screen(text: str) -> str:
    """`text` as the app draws it: controls visible, and every byte of a name that is not
    UTF-8 (a lone surrogate) shown as U+FFFD, one cell wide. Unlike a command's output, which
    prints such bytes back as they are, the app's screen is written as UTF-8, where a
    surrogate would come out as the six characters `\\udcff` in a cell measured as one."""
    return _UNDECODABLE.sub("\ufffd", visible(text))


def markup(text: str, *, lines: bool = False) -> str:
    """`text` made safe to put inside a Rich markup string (the CLI's consoles): tags escaped
    and trailing backslashes doubled, so nothing in it opens, closes or escapes a tag (a
    backslash right before a bracket may show doubled: Rich has no exact escape for it).
    Textual reads markup differently: the app passes `plain(...)`, or Textual's own
    `Content.from_markup(template, name=value)`, never markup built from a name."""
    from rich.markup import escape

    escaped = escape(visible(text, lines=lines).rstrip("\\"))
    return escaped + "\\" * (2 * (len(text) - len(text.rstrip("\\"))))


def visible_text(text: Text) -> Text:
    """A copy of a Rich `Text` with its control characters visible, its styles in place."""
    shown = text.copy()
    shown.plain = visible(text.plain, lines=True)
    return shown


def plain(text: str, style: str = "", *, lines: bool = False) -> Text:
    """`text` as a Rich `Text`: never parsed as markup, control characters visible."""
    from rich.text import Text

    return Text(visible(text, lines=lines), style=style)


class VisibleWriter(io.TextIOBase):
    """A text stream that shows control characters visibly before passing text on: what a
    command prints with `print` can hold a name from a dump, and none may reach the terminal
    as an escape sequence. `raw` is the stream underneath (for Rich, see `terminal_console`)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible(text, lines=True))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed: writable; really read-only
        return getattr(self.raw, "encoding", "utf-8")


@contextmanager
def visible_standard_streams() -> Iterator[None]:
    """While it lasts, `sys.stdout` and `sys.stderr` show control characters visibly."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleWriter(sys.stdout), VisibleWriter(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under a `VisibleWriter`: for the workbench's own control codes (a progress
    line rewritten in place), which must reach the terminal as they are."""
    return getattr(stream, "raw", stream)


def terminal_console(*, stderr: bool = False, **options: Any) -> Console:
    """A Rich console for a command's output that writes its own styling to the terminal but
    shows every control character of the text it prints visibly."""
    from rich.console import Console

    console = Console(file=raw_stream(sys.stderr if stderr else sys.stdout), **options)
    console.push_render_hook(_visible_hook())
    return console


def _visible_segments(renderable: Any) -> Any:
    from rich.measure import Measurement
    from rich.segment import Segment

    class Visible:
        def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
            for segment in console.render(renderable, options):
                if segment.control:
                    yield segment  # Rich's own cursor and screen control
                else:
                    yield Segment(visible(segment.text, lines=True), segment.style)

        def __rich_measure__(self, console: Any, options: Any) -> Any:
            return Measurement.get(console, options, renderable)

    return Visible()


def _visible_hook() -> RenderHook:
    """A Rich render hook: every renderable printed is shown through `_visible_segments`."""
    from rich.console import RenderHook

    class VisibleHook(RenderHook):
        def process_renderables(self, renderables: list[Any]) -> list[Any]:
            return [_visible_segments(r) for r in renderables]

    return VisibleHook()

"""The main screen's notices (`app.notify`) on lines of their own, above the footer.

Textual shows a notice as a toast floating over the bottom right of the screen, where the IR
diff is: it hid the lines a user was reading. Here a notice takes a line of the screen while it
lasts (the panes above give it up, and take it back), so it covers nothing; a severity glyph
says what it is without colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

from rich.text import Text
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widget import Widget

MAX_NOTICES = 3  # shown at once; an older one goes when a fourth comes
GLYPHS: dict[str, tuple[str, str]] = {  # severity -> (glyph, style)
    "information": ("·", ""), "warning": ("!", "bold"), "error": ("✗", "bold reverse")}


class Noticed(Message):
    """A notice to show (posted by `app.notify`, from any thread)."""

    def __init__(self, text: str, severity: SeverityLevel, timeout: float) -> None:
        super().__init__()
        self.text = text
        self.severity = severity
        self.timeout = timeout


@dataclass(frozen=True)
class Notice:
    number: int
    text: str
    severity: str


class NoticeLine(Widget):
    DEFAULT_CSS = """
    NoticeLine {
        height: auto;
        max-height: 6;
        display: none;
        background: $boost;
        color: $text;
        &.-shown { display: block; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.notices: list[Notice] = []
        self._numbers = count()

    def add(self, text: str, severity: str, timeout: float) -> None:
        """Show `text` for `timeout` seconds, below the notices shown already."""
        notice = Notice(next(self._numbers), text, severity)
        self.notices = [*self.notices, notice][-MAX_NOTICES:]
        self.set_timer(timeout, lambda: self._expire(notice))
        self._changed()

    def _expire(self, notice: Notice) -> None:
        if notice in self.notices:
            self.notices = [n for n in self.notices if n is not notice]
            self._changed()

    def _changed(self) -> None:
        self.set_class(bool(self.notices), "-shown")
        self.refresh(layout=True)

    @property
    def texts(self) -> list[str]:
        """The notices shown, oldest first."""
        return [notice.text for notice in self.notices]

    def render(self) -> Text:
        lines = []
        for notice in self.notices:
            glyph, style = GLYPHS.get(notice.severity, GLYPHS["information"])
            lines.append(Text.assemble((glyph, style), " ", notice.text))
        return Text("\n").join(lines)

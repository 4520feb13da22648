"""Replay log pane: what the background jobs did, one line per result, newest last.

Long lines (a comparison's numbers) wrap to the pane's width by default, and wrap again when
the pane changes width (a resize, `z`, the split keys); `w` turns wrapping off and `h` / `l`
scroll sideways, as in the IR views.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import RichLog

from workbench.output.safe_text import visible
from workbench.tui.panes.base import Pane

FLUSH_INTERVAL = 0.1  # seconds between two additions to the drawn log
MAX_LINES = 10_000


class WrappingLog(RichLog):
    """A `RichLog` that wraps at its own width: RichLog renders a line once, at least 78
    cells wide (`min_width`), so lines are cut in a narrower pane, stay 78 wide in a wider one
    and never follow a resize. Here every line is kept and drawn again when the width
    changes; the scrollbar's gutter is always reserved, so a growing log keeps its width."""

    DEFAULT_CSS = """
    WrappingLog {
        scrollbar-gutter: stable;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, max_lines=MAX_LINES, min_width=1, wrap=True, markup=False,
                         highlight=False)
        self.texts: list[str] = []  # every line written, to draw again at another width
        self._drawn_width = 0

    def add(self, lines: list[str]) -> None:
        self.texts = [*self.texts, *lines][-MAX_LINES:]
        for line in lines:
            self._draw(line)

    def _draw(self, line: str, scroll_end: bool | None = None) -> None:
        """Draw one line at the width it takes: the pane's when wrapping, its own when not
        (RichLog would measure it against the console's width, 80 cells in some terminals)."""
        text = Text(line)
        width = self.scrollable_content_region.width if self.wrap else text.cell_len
        self.write(text, width=max(width, 1) if self._size_known else None,
                   scroll_end=scroll_end)

    def redraw(self) -> None:
        """Draw every kept line again (the width or the wrapping changed)."""
        at_end = self.is_vertical_scroll_end
        self._drawn_width = self.scrollable_content_region.width
        self.clear()
        for line in self.texts:
            self._draw(line, scroll_end=False)
        if at_end:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def forget(self) -> None:
        self.texts = []
        self.clear()

    def on_resize(self, event: Resize) -> None:
        super().on_resize(event)  # the first size known: draws the lines written before
        width = self.scrollable_content_region.width
        if self.wrap and width and width != self._drawn_width and self.texts:
            self.redraw()
        self._drawn_width = width


class ReplayLogPane(Pane):
    TITLE = "Log"
    KEY = "8"
    HELP = ("Every replay, bisection and triage result as it arrives, with the comparison "
            "details (max errors, first mismatching index, and the error against its "
            "rounding error bound where the tolerance was not enough) and failures in full.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("C", "clear", "Clear log"),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap long lines, or scroll them with h / l"),
        Binding("h", "sideways(-8)", "Left", show=False),
        Binding("l", "sideways(8)", "Right", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.log_widget = WrappingLog(id="replay-log")
        self._pending: list[str] = []  # written together: a triage reports hundreds a second

    def compose(self) -> ComposeResult:
        yield self.log_widget

    def focus_target(self) -> Widget:
        return self.log_widget

    def write(self, text: str) -> None:
        if not self._pending:
            self.set_timer(FLUSH_INTERVAL, self._flush)
        self._pending.append(f"{time.strftime('%H:%M:%S')} {visible(text, lines=True)}")

    def _flush(self) -> None:
        lines, self._pending = self._pending, []
        self.log_widget.add(lines)

    @property
    def lines(self) -> list[str]:
        """Every line written, including those not drawn yet."""
        return [*self.log_widget.texts, *self._pending]

    def action_clear(self) -> None:
        self.log_widget.forget()

    def action_toggle_wrap(self) -> None:
        log = self.log_widget
        log.wrap = not log.wrap
        log.redraw()
        self.notify("log lines wrap" if log.wrap else "log lines scroll: h / l", timeout=2)

    def action_sideways(self, cells: int) -> None:
        self.log_widget.scroll_relative(x=cells, animate=False)

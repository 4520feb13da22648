"""Replay log pane: what the background jobs did, one line per result, newest last.

Long lines (a comparison's numbers) wrap by default; `w` turns wrapping off and `h` / `l`
scroll sideways, as in the IR views.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import RichLog

from workbench.output.safe_text import visible
from workbench.tui.panes.base import Pane

FLUSH_INTERVAL = 0.1  # seconds between two additions to the drawn log
MAX_LINES = 10_000


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
        self.log_widget = RichLog(id="replay-log", max_lines=MAX_LINES, wrap=True, markup=False,
                                  highlight=False)
        self._written: list[str] = []  # every line drawn, to draw again when wrapping changes
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
        self._written = [*self._written, *lines][-MAX_LINES:]
        for line in lines:
            self.log_widget.write(Text(line))

    @property
    def lines(self) -> list[str]:
        """Every line written, including those not drawn yet."""
        return [*self._written, *self._pending]

    def action_clear(self) -> None:
        self._written = []
        self.log_widget.clear()

    def action_toggle_wrap(self) -> None:
        log = self.log_widget
        log.wrap = not log.wrap
        log.clear()
        for line in self._written:
            log.write(Text(line))
        self.notify("log lines wrap" if log.wrap else "log lines scroll: h / l", timeout=2)

    def action_sideways(self, cells: int) -> None:
        self.log_widget.scroll_relative(x=cells, animate=False)

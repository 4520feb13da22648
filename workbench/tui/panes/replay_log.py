"""Replay log pane: what the background jobs did, one line per result, newest last."""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Log

from workbench.output.safe_text import visible
from workbench.tui.panes.base import Pane

FLUSH_INTERVAL = 0.1  # seconds between two additions to the drawn log


class ReplayLogPane(Pane):
    TITLE = "Log"
    KEY = "8"
    HELP = ("Every replay, bisection and triage result as it arrives, with the comparison "
            "details (max errors, first mismatching index, and the error against its "
            "rounding error bound where the tolerance was not enough) and failures in full.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("C", "clear", "Clear log"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.log_widget = Log(id="replay-log", max_lines=10_000)
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
        self.log_widget.write_lines(lines)

    @property
    def lines(self) -> list[str]:
        """Every line written, including those not drawn yet."""
        return [*self.log_widget.lines, *self._pending]

    def action_clear(self) -> None:
        self.log_widget.clear()

"""Replay status as the panes show it: a symbol and a style for every state, never colour alone.

States are the replay engine's outcome kinds (`Kind`: ok, mismatch, unsupported, error) plus
"none" (not replayed yet), "running" and "stopped" (cancelled after some steps). A status of a
replay result carries its `Outcome`, so a pane can show the numbers behind a badge without
reading them from text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from workbench.replay.judge.outcome import Kind, Outcome

DETAIL_WIDTH = 60  # a badge's detail is cut here (an error message can be long)

State = Kind | Literal["none", "running", "stopped"]

# state -> (symbol, component class, word)
BADGES: dict[State, tuple[str, str, str]] = {
    "none": ("·", "status--none", "not replayed"),
    "running": ("…", "status--running", "running"),
    "stopped": ("·", "status--none", "stopped"),  # cancelled: some steps evaluated, no verdict
    Kind.OK: ("✓", "status--ok", "ok"),
    Kind.MISMATCH: ("✗", "status--fail", "failing"),
    Kind.UNSUPPORTED: ("?", "status--unsupported", "unsupported"),
    Kind.ERROR: ("!", "status--error", "error"),
}


@dataclass(frozen=True)
class Status:
    """A module's or a step's replay state; `detail` says more (the culprit pass, the op)."""

    state: State = "none"
    detail: str = ""
    outcome: Outcome | None = None
    cached: bool = False  # from the results cache of an earlier run, not evaluated now

    @classmethod
    def of(cls, outcome: Outcome) -> Status:
        """The badge of a replay outcome: `✗ fusion` (the culprit), `? sort`, `✓`."""
        label = outcome.label
        if len(label) > DETAIL_WIDTH:
            label = label[:DETAIL_WIDTH - 1] + "…"
        return cls(outcome.kind, label, outcome)

    @property
    def symbol(self) -> str:
        return BADGES[self.state][0]

    @property
    def style(self) -> str:
        return BADGES[self.state][1]

    @property
    def text(self) -> str:
        """The badge as words: `✗ failing at fusion`, `? unsupported: sort`."""
        symbol, _, word = BADGES[self.state]
        cached = " (cached)" if self.cached else ""
        if not self.detail:
            return f"{symbol} {word}{cached}"
        joiner = " at " if self.state == Kind.MISMATCH else ": "
        return f"{symbol} {word}{joiner}{self.detail}{cached}"

    @property
    def short(self) -> str:
        """Symbol and detail only, for narrow columns: `✗ fusion`."""
        return f"{self.symbol} {self.detail}" if self.detail else self.symbol


NOT_REPLAYED = Status()

"""How a replay ended, as data: one vocabulary for steps, verdicts, triage results and the TUI.

`Kind` is the status (ok, mismatch, unsupported, error); an `Outcome` adds what a reader needs
to see why: the reason (the op the evaluator lacks, the error), the culprit pass of a verdict,
and the `Comparison` with the numbers (error, bound, which output, where, expected and actual
values). Code decides on these fields; English is written from them here (a comparison's
numbers beside the `Comparison`, in `compare.py`), and never parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from workbench.model import Step
    from workbench.replay.judge.compare import Comparison


Mark = Literal["good", "bad", "skip"]  # a bisection mark


class Kind(str, Enum):
    """A replay status; the string value is what JSON and the README call it (and what it
    equals: `Kind.OK == "ok"`)."""

    OK = "ok"
    MISMATCH = "mismatch"
    UNSUPPORTED = "unsupported"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def mark(self) -> Mark:
        """The bisection mark of a step with this status: good, bad, or skip (not judged)."""
        if self == Kind.OK:
            return "good"
        return "bad" if self == Kind.MISMATCH else "skip"


# The order failing results are listed in (the most alarming first).
KIND_ORDER: dict[Kind, int] = {Kind.MISMATCH: 0, Kind.ERROR: 1, Kind.UNSUPPORTED: 2, Kind.OK: 3}


@dataclass(frozen=True)
class Outcome:
    """What one step, execution or module came to.

    `reason` says why a step was not judged (`sort` for unsupported, the error message);
    `culprit` names the pass a verdict blames (or `recorded result` when only the real run's
    result differs); `comparison` carries the numbers behind ok and mismatch.
    """

    kind: Kind
    reason: str = ""
    culprit: str = ""
    comparison: Comparison | None = None

    @property
    def status(self) -> str:
        """The step status of the JSON and the README: `ok`, `unsupported: sort`, ..."""
        if self.reason and self.kind != Kind.OK:  # a mismatch's: a step that did not finish
            return f"{self.kind}: {self.reason}"
        return str(self.kind)

    @property
    def label(self) -> str:
        """A few words for a badge: the culprit pass, the unsupported op, the error."""
        return self.culprit if self.kind == Kind.MISMATCH else self.reason

    @property
    def text(self) -> str:
        """One line for people: the status, then the numbers when there are any."""
        if self.comparison is not None:
            return self.comparison.summary
        return self.status


# ------------------------------------------------------------------------------ verdicts


def step_name(step: Step) -> str:
    return f"step {step.index} ({step.label})"

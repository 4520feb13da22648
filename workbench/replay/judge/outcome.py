"""How a replay ended, as data: one vocabulary for steps, verdicts, triage results and the TUI.

`Kind` is the status (ok, mismatch, unsupported, error); an `Outcome` adds what a reader needs
to see why: the reason (the op the evaluator lacks, the error), the culprit pass of a verdict,
and the `Comparison` with the numbers (error, bound, which output, where, expected and actual
values). Code decides on these fields; English is written from them here, in one place, and
never parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from workbench.model import Step
    from workbench.replay.judge.compare import BoundCheck, Comparison


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
            return comparison_text(self.comparison)
        return self.status


# ------------------------------------------------------------------------------ numbers


def where_text(element: tuple[int, ...], index: tuple[int, ...] | None) -> str:
    """`{1}[2,3]`: the tuple path of an output, then the index inside it."""
    path = "".join(f"{{{i}}}" for i in element)
    if index is None:
        return path
    return path + "[" + ",".join(str(i) for i in index) + "]"


def bound_text(bound: BoundCheck) -> str:
    """The element nearest to (or furthest beyond) its rounding error bound, with numbers."""
    where = where_text(bound.element, bound.index)
    relation = (f"<= bound {bound.bound:.3g}" if bound.error <= bound.bound
                else f"> bound {bound.bound:.3g}, {bound.ratio:.3g}x")
    return (f"worst at {where}: error {bound.error:.3g} {relation} (higher-precision value "
            f"{bound.truth!r}, actual {bound.actual!r})")


def noise_text(comparison: Comparison) -> str:
    """Where rounding noise inside the program widened the bound, and what the noise stage
    left out where that may matter ("" when nothing)."""
    found = comparison.widened_by
    left_out = f"; {comparison.noise_left_out}" if comparison.noise_left_out else ""
    if not found:
        problem = comparison.noise_problem
        return f"; no noise stage: {problem}" if problem and not comparison.ok else left_out
    listed = ", ".join(str(d) for d in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return (f"; the bound includes rounding noise inside the program, which decides values "
            f"at {listed}{more}{left_out}")


def comparison_text(comparison: Comparison) -> str:
    """The verdict of one comparison, how far off, the bound, where, the platform's rounding
    the bound allowed for (`gpu_numerics.py`), and the noise that widened it."""
    text = _verdict_text(comparison)
    if comparison.allowance:
        verdict = "within" if comparison.ok else "beyond"
        text += f" ({verdict} {comparison.allowance} rounding of the reference)"
    return text + noise_text(comparison)


def _verdict_text(comparison: Comparison) -> str:
    c = comparison
    if c.problem is not None:
        where = where_text(c.first_element, c.first_index)
        return c.problem + (f" at {where}" if where else "")
    errors = f"max abs {c.max_abs_error:.3g}, max rel {c.max_rel_error:.3g}"
    tolerance = c.tolerance_text
    if c.ok:
        if c.bound is None:
            return f"ok: {c.total} elements within {tolerance} ({errors})"
        return (f"ok: {c.total} elements within {tolerance} or within the rounding error "
                f"bound ({errors}; {bound_text(c.bound)})")
    first = (f"first at {where_text(c.first_element, c.first_index)}: "
             f"expected {c.expected_value!r}, actual {c.actual_value!r}")
    if c.bound is None:
        why = f"; no rounding error bound: {c.shadow_problem}" if c.shadow_problem else ""
        return (f"mismatch: {c.mismatches} of {c.total} elements differ beyond {tolerance} "
                f"({errors}); {first}{why}")
    return (f"mismatch: {c.mismatches} of {c.total} elements differ beyond {tolerance} and "
            f"beyond the rounding error bound ({errors}); {first}; {bound_text(c.bound)}")


# ------------------------------------------------------------------------------ verdicts


def step_name(step: Step) -> str:
    return f"step {step.index} ({step.label})"

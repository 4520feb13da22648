"""Find the culprit step: the first failing step whose predecessor passes.

`BisectState` is the whole logic, UI-free: it takes good/bad/skip marks on the positions of a
module's replayable steps (0 is the reference) and says which position to try next, how many
candidates remain, the culprit, and every mark that contradicts monotonicity. The automatic
bisection (`run_bisect`) and the TUI's keyboard-driven manual bisection both drive it.

The order of evaluations proves the bound: the reference (position 0) first, then the last
step (is anything broken at all?), then the midpoint of the open interval between the highest
good position and the lowest bad one. For N steps that is at most 1 + 1 + ceil(log2(N - 1))
<= ceil(log2 N) + 2 evaluations when no step is skipped. A skipped step (the evaluator cannot
do it) costs its evaluation and is left out like `git bisect skip`: the next try is the nearest
untested position to the midpoint, and when only skipped steps separate the last good from the
first bad, the culprit is reported as a range.

Steps an evaluator cannot do usually come as a tail: once a pipeline lowers into dialects the
evaluator does not know, every later step is unsupported too. So while nothing is known to be
bad, the lowest skipped step above the last good one is a *frontier*: bisection searches below
it (binary search for the last evaluable step, in about log2 N evaluations, instead of walking
back one unsupported step at a time) and leaves the steps above it untested, reporting them
(`untested_beyond_frontier`; `linear` evaluation tries every one).

Bisection assumes steps fail monotonically (once broken, broken until the end). It cannot see
a step that breaks and is repaired between two probes; `linear` evaluation checks every step,
and any mark that contradicts the assumption (a good step after a bad one) is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.replay.judge.compare import comparison_text
from workbench.replay.judge.outcome import Kind, Mark, Outcome, step_name

if TYPE_CHECKING:
    from workbench.model import Step
    from workbench.replay.judge.compare import Comparison
    from workbench.replay.steps import Replay, StepResult

MARKS: tuple[Mark, ...] = ("good", "bad", "skip")


def evaluation_bound(count: int) -> int:
    """The most evaluations a bisection over `count` steps needs when nothing is skipped."""
    if count <= 1:
        return count
    return math.ceil(math.log2(count)) + 2


@dataclass
class BisectState:
    """Marks on positions 0..count-1 and what follows from them.

    Position 0 is the reference: the other steps are judged against its result, so it is
    tried first and is good by construction once it evaluates (if it cannot be evaluated,
    nothing can be judged: mark it skip and `done` becomes true with no culprit).
    """

    count: int
    marks: dict[int, Mark] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)  # positions in the order they were marked

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("bisection needs at least one step")

    def mark(self, position: int, mark: Mark) -> None:
        """Record the outcome of `position` (marking again replaces the earlier mark)."""
        if not 0 <= position < self.count:
            raise IndexError(f"position {position} outside 0..{self.count - 1}")
        if mark not in MARKS:
            raise ValueError(f"mark must be one of {', '.join(MARKS)}, not {mark!r}")
        if position == 0 and mark == "bad":
            raise ValueError("position 0 is the reference: it is good, or skip when it "
                             "cannot be evaluated")
        if position in self.marks:
            self.order.remove(position)
        self.marks[position] = mark
        self.order.append(position)

    # What the marks say ---------------------------------------------------------------------

    @property
    def reference_failed(self) -> bool:
        return self.marks.get(0) == "skip"

    @property
    def first_bad(self) -> int | None:
        """The lowest position marked bad."""
        bad = [p for p, m in self.marks.items() if m == "bad"]
        return min(bad) if bad else None

    @property
    def last_good(self) -> int:
        """The highest good position below the first bad one (0, the reference, at least)."""
        limit = self.first_bad if self.first_bad is not None else self.count
        good = [p for p, m in self.marks.items() if m == "good" and p < limit]
        return max(good, default=0)

    @property
    def frontier(self) -> int | None:
        """While no step is known bad: the lowest skipped position above the last good one."""
        if self.first_bad is not None:
            return None
        low = self.last_good
        return min((p for p, m in self.marks.items() if m == "skip" and p > low), default=None)

    @property
    def untested_beyond_frontier(self) -> list[int]:
        """Positions above the frontier left untested (bisection does not search there)."""
        frontier = self.frontier
        if frontier is None:
            return []
        return [p for p in range(frontier + 1, self.count) if p not in self.marks]

    def _open_positions(self) -> list[int]:
        """Unmarked positions that could still hold the culprit (or reveal one)."""
        if self.first_bad is not None:
            high = self.first_bad
        elif (self.count - 1) not in self.marks:
            high = self.count  # is anything broken at all? the last step tells first
        else:
            high = self.frontier if self.frontier is not None else self.count
        return [p for p in range(self.last_good + 1, high) if p not in self.marks]

    @property
    def remaining(self) -> int:
        """How many positions are still untested where the culprit could be."""
        if self.done:
            return 0
        return len(self._open_positions())

    @property
    def steps_left(self) -> int:
        """Roughly how many more evaluations bisection needs (as `git bisect` says it)."""
        remaining = self.remaining
        return 0 if remaining == 0 else math.ceil(math.log2(remaining + 1))

    @property
    def done(self) -> bool:
        if 0 not in self.marks:
            return False
        if self.reference_failed:
            return True
        return not self._open_positions()

    def next_position(self) -> int | None:
        """The position to evaluate next, or None when the marks settle the question."""
        if 0 not in self.marks:
            return 0
        if self.done:
            return None
        open_positions = self._open_positions()
        if self.first_bad is None and (self.count - 1) not in self.marks:
            return self.count - 1  # nothing known to be broken yet: is the last step?
        high = self.first_bad if self.first_bad is not None else self.frontier
        assert high is not None  # the last step is marked: good (done) or skip (a frontier)
        midpoint = (self.last_good + high) // 2
        return min(open_positions, key=lambda p: (abs(p - midpoint), p))

    @property
    def culprit(self) -> int | None:
        """The first bad position whose predecessor is good; None when not settled."""
        bad = self.first_bad
        if bad is None or not self.done or self.reference_failed:
            return None
        return bad if self.last_good == bad - 1 else None

    @property
    def culprit_range(self) -> tuple[int, int] | None:
        """(first, last) positions the culprit may be when skipped steps hide it, else None.

        Like `git bisect` with only skipped commits left: any of these could be the first bad.
        """
        bad = self.first_bad
        if bad is None or not self.done or self.reference_failed or self.culprit is not None:
            return None
        return self.last_good + 1, bad

    @property
    def skipped(self) -> list[int]:
        return sorted(p for p, m in self.marks.items() if m == "skip")

    @property
    def contradictions(self) -> list[str]:
        """Marks that contradict monotone failure: a step that passes after one that failed."""
        bad = self.first_bad
        if bad is None:
            return []
        later_good = sorted(p for p, m in self.marks.items() if m == "good" and p > bad)
        return [f"position {p} passes although position {bad} before it fails"
                for p in later_good]


@dataclass
class BisectResult:
    """What a bisection found, in positions of the replayable steps."""

    state: BisectState
    evaluations: int
    linear: bool

    @property
    def culprit(self) -> int | None:
        return self.state.culprit


def run_bisect(count: int, judge: Callable[[int], Mark], linear: bool = False) -> BisectResult:
    """Bisect positions 0..count-1, calling `judge(position)` once per evaluation.

    With `linear`, every position is judged in order (the culprit is still the first bad
    position after a good one, and every later good position is reported as a contradiction).
    `judge` may raise to stop (cancellation); nothing is swallowed here.
    """
    state = BisectState(count)
    evaluations = 0
    if linear:
        for step_position in range(count):
            state.mark(step_position, judge(step_position))
            evaluations += 1
            if step_position == 0 and state.reference_failed:
                break
        return BisectResult(state, evaluations, linear=True)
    while (position := state.next_position()) is not None:
        state.mark(position, judge(position))
        evaluations += 1
    return BisectResult(state, evaluations, linear=False)


@dataclass
class Verdict:
    """What replaying one execution found: `status` (a `Kind`), the culprit step, or a range
    of candidates when skipped steps hide it, or neither when only the recorded result
    differs from the reference; `detail` and `to_json` are written from these fields.
    """

    status: Kind
    evaluations: int
    steps: int
    linear: bool
    inputs: str = ""
    reference: Step | None = None
    reference_outcome: Outcome | None = None
    culprit: StepResult | None = None
    candidates: list[Step] = field(default_factory=list)
    recorded: Comparison | None = None
    first_bad: Step | None = None
    passing_again: list[Step] = field(default_factory=list)  # good after `first_bad`
    skipped: list[StepResult] = field(default_factory=list)
    frontier: Step | None = None
    untested: int = 0
    results: list[StepResult] = field(default_factory=list)  # in evaluation order
    shadow_evaluations: int = 0
    noise_evaluations: int = 0  # random-rounding evaluations of the reference (noise stage)
    recorded_environment: str | None = None  # see `Replay.recorded_environment`
    recorded_not_judged: str | None = None  # see `Replay.recorded_not_judged`

    @property
    def contradictions(self) -> list[str]:
        assert self.first_bad is not None or not self.passing_again
        return [contradiction_text(step, self.first_bad) for step in self.passing_again]

    @property
    def detail(self) -> str:
        return verdict_text(self)

    @property
    def outcome(self) -> Outcome:
        """The verdict as one outcome: the culprit pass, or why nothing could be judged."""
        if self.status == Kind.MISMATCH:
            if self.culprit is not None:
                return Outcome(Kind.MISMATCH, self.culprit.outcome.reason,
                               culprit=self.culprit.step.pass_name,
                               comparison=self.culprit.comparison)
            if self.candidates:
                return Outcome(Kind.MISMATCH, culprit=f"{self.candidates[0].pass_name}…")
            return Outcome(Kind.MISMATCH, culprit="recorded result", comparison=self.recorded)
        if self.status == Kind.OK:
            return Outcome(Kind.OK, comparison=self.recorded)
        if self.reference_outcome is not None and self.reference_outcome.kind != Kind.OK:
            return Outcome(self.status, self.reference_outcome.reason)
        reasons = [r.outcome.reason for r in self.skipped if r.outcome.reason]
        if self.recorded_not_judged is not None:
            reasons.append(f"the recorded result is {self.recorded_not_judged}")
        return Outcome(self.status, reasons[0] if reasons else "no step could be evaluated")


def verdict_text(verdict: Verdict) -> str:
    """The detail line of a bisection verdict: the culprit and why, what was not checked."""
    v = verdict
    if v.reference_outcome is not None and v.reference_outcome.kind != Kind.OK:
        assert v.reference is not None
        return (f"the reference, {step_name(v.reference)}, cannot be evaluated: "
                f"{v.reference_outcome.status}")
    if v.reference is None:
        return "the module has no replayable steps"
    parts: list[str] = []
    recorded = v.recorded
    recorded_said = False
    if v.culprit is not None:
        parts.append(f"{step_name(v.culprit.step)} is the first to differ from the reference "
                     f"({v.culprit.outcome.text})")
    elif v.candidates:
        parts.append(f"the first step to differ from the reference is one of "
                     f"{step_name(v.candidates[0])} to {step_name(v.candidates[-1])}: the steps "
                     f"before the last could not be evaluated")
    elif recorded is not None and not recorded.ok and v.recorded_not_judged is None:
        parts.append(f"the recorded result differs from the reference "
                     f"({comparison_text(recorded)}), but no replayed step does")
        recorded_said = True
    elif v.skipped:
        parts.append("no evaluated step differs from the reference")
        if v.untested and v.frontier is not None:
            parts.append(f"{v.untested} step(s) after {step_name(v.frontier)}, which could "
                         f"not be evaluated, were not tried (--linear tries every step)")
    else:
        checked = "every step" if v.linear else f"{v.evaluations} of {v.steps} steps"
        parts.append(f"no step differs from the reference (checked {checked})")
    if recorded is not None and not recorded_said and v.recorded_not_judged is not None:
        parts.append(f"the recorded result is {v.recorded_not_judged}")
    elif recorded is not None and not recorded_said:
        agreement = "matches" if recorded.ok else "differs from"
        parts.append(f"the recorded result {agreement} the reference "
                     f"({comparison_text(recorded)})")
        if v.recorded_environment is not None:
            parts.append(f"the platform's floating-point environment decided it: "
                         f"{v.recorded_environment}")
    elif recorded is None:
        parts.append(f"no recorded result to check (inputs: {v.inputs})")
    if v.skipped:
        listed = "; ".join(f"{step_name(r.step)}: {r.outcome.status}" for r in v.skipped)
        parts.append(f"{len(v.skipped)} step(s) could not be evaluated: {listed}")
    if v.contradictions:
        parts.append("not monotone: " + "; ".join(v.contradictions))
    return "; ".join(parts)


def contradiction_text(step: Step, first_bad: Step | None) -> str:
    """A step that passes after an earlier one failed (bisection assumed it could not)."""
    assert first_bad is not None
    return f"{step_name(step)} matches the reference again after {step_name(first_bad)} differs"


def bisect_replay(replay: Replay, linear: bool = False,
                  on_result: Callable[[StepResult], None] | None = None) -> Verdict:
    """Find the culprit step of one execution; streams each step result to `on_result`.

    Raises `Cancelled` when the replay's cancel event is set.
    """
    order: list[StepResult] = []

    def judge(position: int) -> Mark:
        result = replay.evaluate(position)
        order.append(result)
        if on_result is not None:
            on_result(result)
        if position == 0:
            return "good" if result.kind == Kind.OK else "skip"
        return result.kind.mark

    if not replay.steps:
        return Verdict(Kind.UNSUPPORTED, 0, 0, linear, inputs=replay.inputs.origin)
    outcome = run_bisect(len(replay.steps), judge, linear=linear)
    return _verdict(replay, outcome, order)


def _verdict(replay: Replay, outcome: BisectResult, order: list[StepResult]) -> Verdict:
    state = outcome.state
    steps = replay.steps
    reference = replay.results[0]
    verdict = Verdict(Kind.OK, outcome.evaluations, len(steps), outcome.linear,
                      inputs=replay.inputs.origin, reference=reference.step,
                      reference_outcome=reference.outcome,
                      recorded=replay.recorded_comparison, results=order,
                      shadow_evaluations=replay.shadow_evaluations,
                      noise_evaluations=replay.noise_evaluations,
                      recorded_environment=replay.recorded_environment,
                      recorded_not_judged=replay.recorded_not_judged)
    if reference.kind != Kind.OK:
        verdict.status = reference.kind
        return verdict
    verdict.skipped = [replay.results[p] for p in state.skipped]
    if state.first_bad is not None:
        verdict.first_bad = steps[state.first_bad]
        verdict.passing_again = [steps[p] for p in sorted(
            p for p, m in state.marks.items() if m == "good" and p > state.first_bad)]
    recorded = replay.recorded_comparison
    if state.culprit is not None:
        verdict.status = Kind.MISMATCH
        verdict.culprit = replay.results[state.culprit]
    elif state.culprit_range is not None:
        verdict.status = Kind.MISMATCH
        first, last = state.culprit_range
        verdict.candidates = steps[first:last + 1]
    elif recorded is not None and not recorded.ok and replay.recorded_not_judged is None:
        verdict.status = Kind.MISMATCH
    elif replay.recorded_not_judged is not None and not verdict.skipped:
        verdict.status = Kind.ERROR  # the recording is not judged, and nothing else failed
    elif verdict.skipped:
        kinds = {r.kind for r in verdict.skipped}
        verdict.status = Kind.UNSUPPORTED if Kind.UNSUPPORTED in kinds else Kind.ERROR
        if state.frontier is not None:
            verdict.frontier = steps[state.frontier]
            verdict.untested = len(state.untested_beyond_frontier)
    return verdict

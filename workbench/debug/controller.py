"""Stepping over a pipeline like a debugger steps over a program.

The `Stepper` stands on one step of a module's timeline and moves on command:

- `step`: to the next step;
- `next`: to the next step at the same nesting depth or shallower (steps of a nested pipeline,
  e.g. function passes under a module pass manager, are stepped over, their breakpoints too);
- `continue_`: forward until an enabled breakpoint hits, or the end;
- `finish`: forward to the last step of the enclosing pipeline (stopping earlier at a
  breakpoint);
- `skip`: leave the current step out (it is never evaluated nor stopped at again, like
  `git bisect skip`) and move to the next step.

Moving over a step checks the breakpoints on it; a `mismatch` breakpoint needs the step's
replay result, asked of the `evaluate` callback (it may raise to cancel; nothing is caught).
Everything is synchronous and UI-free: a UI calls it from a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.debug.breakpoints import Breakpoint, BreakpointList
from workbench.debug.facts import DumpFacts, StepInfo, location_matches
from workbench.model import Step
from workbench.replay.judge.outcome import Kind

Evaluate = Callable[[Step], Kind]  # a step's replay status


@dataclass
class Stop:
    """Where a command stopped, and why: "breakpoint", "step", "end" (the timeline's last
    step was passed), "pipeline-end"."""

    position: int
    reason: str
    hits: list[Breakpoint] = field(default_factory=list)
    passed: int = 0  # steps moved over, including the one stopped at

    def describe(self, steps: list[Step]) -> str:
        where = steps[self.position].label if 0 <= self.position < len(steps) else "—"
        if self.reason == "breakpoint":
            names = ", ".join(f"#{b.id} {b.spec}" for b in self.hits)
            return f"breakpoint {names} at {where}"
        if self.reason == "end":
            return f"end of the pipeline (at {where})"
        if self.reason == "pipeline-end":
            return f"end of the enclosing pipeline at {where}"
        return f"at {where}"


def nesting_depth(step: Step) -> int:
    """How deep the IR a step shows sits: 0 for a module, 1 for a function inside it, ...

    From the MLIR scope: a path in IR tree folders (`builtin.module @m/func.func @f`), the op
    alone in print-ir logs (`func.func @f`, which sits under the module). XLA steps are all
    module-wide.
    """
    if not step.scope:
        return 0
    parts = step.scope.split("/")
    if len(parts) == 1 and not parts[0].startswith(("builtin.module", "module")):
        return 1
    return len(parts) - 1


def pipeline_group(step: Step) -> tuple[str | None, int]:
    return (step.pipeline, nesting_depth(step))


class Stepper:
    def __init__(self, steps: list[Step], breakpoints: BreakpointList, facts: DumpFacts,
                 evaluate: Evaluate | None = None) -> None:
        self.steps = steps
        self.breakpoints = breakpoints
        self.facts = facts
        self.evaluate = evaluate
        self.position = 0
        self.skipped: set[int] = set()
        self.results: dict[int, Kind] = {}  # position -> replay status, as evaluated

    @property
    def current(self) -> Step:
        return self.steps[self.position]

    def result_of(self, position: int) -> Kind | None:
        """The replay status of a step, evaluating it once (None without an evaluator)."""
        if position not in self.results:
            if self.evaluate is None:
                return None
            self.results[position] = self.evaluate(self.steps[position])
        return self.results[position]

    def hits(self, position: int) -> list[Breakpoint]:
        """The enabled breakpoints that stop at `position`."""
        active = self.breakpoints.active()
        if not active or position in self.skipped:
            return []
        step = self.steps[position]
        info: StepInfo = self.facts.info(
            step, ops=self.breakpoints.wants("op") or self.breakpoints.wants("op-change"),
            locations=self.breakpoints.wants("loc"))
        found = []
        for breakpoint_ in active:
            if self._hit(breakpoint_, position, info):
                found.append(breakpoint_)
        return found

    def _hit(self, breakpoint_: Breakpoint, position: int, info: StepInfo) -> bool:
        kind, pattern = breakpoint_.kind, breakpoint_.pattern
        if kind == "pass":
            step = info.step
            return bool(breakpoint_.regex.search(step.pass_name)
                        or (step.pipeline and breakpoint_.regex.search(
                            f"{step.pipeline}.{step.pass_name}")))
        if kind == "action":
            return pattern in info.action_tags
        if kind == "loc":
            file, line = breakpoint_.location
            return any(location_matches(loc, file, line) for loc in info.changed_locations)
        if kind == "op":
            return info.has_previous and info.ops.get(pattern, 0) > 0 \
                and info.ops_before.get(pattern, 0) == 0
        if kind == "op-change":
            return info.has_previous and \
                info.ops.get(pattern, 0) != info.ops_before.get(pattern, 0)
        if kind == "mismatch":
            if position == 0 or any(r == Kind.MISMATCH for p, r in self.results.items()
                                    if p < position and p not in self.skipped):
                return False  # only the first mismatch
            return self.result_of(position) == Kind.MISMATCH
        return False

    # ----- commands ---------------------------------------------------------------------------

    def _run(self, stop_at: Callable[[int], str | None]) -> Stop:
        """Move forward one step at a time until `stop_at(position)` names a reason or a
        breakpoint hits; positions in `skipped` are passed over without a look."""
        passed = 0
        position = self.position
        while position + 1 < len(self.steps):
            position += 1
            if position in self.skipped:
                continue
            passed += 1
            hits = self.hits(position)
            if hits:
                for breakpoint_ in hits:
                    breakpoint_.hits += 1
                self.position = position
                return Stop(position, "breakpoint", hits, passed)
            reason = stop_at(position)
            if reason is not None:
                self.position = position
                return Stop(position, reason, passed=passed)
        self.position = position
        return Stop(position, "end", passed=passed)

    def step(self) -> Stop:
        return self._run(lambda position: "step")

    def next(self) -> Stop:
        depth = nesting_depth(self.current)
        return self._run(
            lambda position: "step" if nesting_depth(self.steps[position]) <= depth else None)

    def continue_(self) -> Stop:
        return self._run(lambda position: None)

    def finish(self) -> Stop:
        group = pipeline_group(self.current)
        last = self.position
        while last + 1 < len(self.steps) and pipeline_group(self.steps[last + 1]) == group:
            last += 1
        if last == self.position:
            return Stop(self.position, "pipeline-end")
        return self._run(lambda position: "pipeline-end" if position == last else None)

    def skip(self) -> Stop:
        self.skipped.add(self.position)
        return self.step()

    def go_to(self, position: int) -> None:
        """Stand on `position` without running anything (the user moved the cursor)."""
        if not 0 <= position < len(self.steps):
            raise IndexError(f"position {position} outside 0..{len(self.steps) - 1}")
        self.position = position

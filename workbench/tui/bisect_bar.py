"""Manual bisection from the keyboard, like `git bisect`: the app proposes a step, the user
says good, bad or skip (after reading its diff, or evaluating it with `e`), until the culprit
is found. The search itself is the replay engine's `BisectState`; this is its UI.

Positions are those of the module's replayable steps; position 0, the reference the others
are judged against, is good by definition.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from workbench.model import Execution, Step
from workbench.replay.bisect import BisectState, Mark
from workbench.tui.step_names import step_name
from workbench.tui.words import plural


@dataclass
class ManualBisect:
    module_key: str
    module_name: str
    execution: Execution | None
    steps: list[Step]
    state: BisectState
    last_result: str = ""  # what the last evaluation said, shown in the bar

    @classmethod
    def start(cls, module_key: str, module_name: str, execution: Execution | None,
              steps: list[Step]) -> ManualBisect:
        state = BisectState(len(steps))
        state.mark(0, "good")
        return cls(module_key, module_name, execution, steps, state)

    def position_of(self, step: Step | None) -> int | None:
        if step is None:
            return None
        return next((p for p, s in enumerate(self.steps) if s.index == step.index), None)

    @property
    def proposal(self) -> Step | None:
        position = self.state.next_position()
        return None if position is None else self.steps[position]

    def mark(self, step: Step | None, mark: Mark) -> str | None:
        """Mark `step` (the proposal when `step` is not a bisected step); an error message
        when the mark is refused."""
        position = self.position_of(step)
        if position is None:
            proposal = self.state.next_position()
            if proposal is None:
                return "the bisection is over"
            position = proposal
        try:
            self.state.mark(position, mark)
        except ValueError as error:
            return str(error)
        self.last_result = ""
        return None

    @property
    def culprit(self) -> Step | None:
        position = self.state.culprit
        return None if position is None else self.steps[position]

    def outcome(self) -> str:
        """What the finished bisection found, in words."""
        state = self.state
        if state.culprit is not None:
            text = f"culprit: {step_name(self.steps[state.culprit])}"
        elif state.culprit_range is not None:
            first, last = state.culprit_range
            text = (f"the culprit is one of {step_name(self.steps[first])} … "
                    f"{step_name(self.steps[last])} (skipped steps hide it)")
        else:
            text = "no step marked bad: nothing broke"
        if state.contradictions:
            text += "; not monotone: " + "; ".join(state.contradictions)
        return text


class BisectBar(Static):
    """Shown above the footer while a manual bisection runs (in the layout's flow, not docked:
    a docked bar would sit under the footer)."""

    DEFAULT_CSS = """
    BisectBar {
        height: 1;
        display: none;
        background: $warning 20%;
        padding: 0 1;
        &.-active { display: block; }
    }
    """

    def show_state(self, bisect: ManualBisect | None) -> None:
        self.set_class(bisect is not None, "-active")
        if bisect is None:
            self.update("")
            return
        state = bisect.state
        text = Text()
        text.append(f"bisect {bisect.module_name}  ", style="bold")
        proposal = bisect.proposal
        if proposal is None:
            text.append(bisect.outcome(), style="bold")
            text.append("   escape: close")
        else:  # the keys (g, b, s, e, escape) are in the footer
            text.append(f"try {step_name(proposal)}")
            text.append(f" · {plural(state.remaining, 'candidate')} left, "
                        f"about {plural(state.steps_left, 'step')}")
            if bisect.last_result:
                text.append(f" · {bisect.last_result}")
        self.update(text)

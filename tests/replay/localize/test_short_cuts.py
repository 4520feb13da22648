"""Localization's short-cuts change its cost, never its answer: on every planted case the
localization with a short-cut gives what the full path gives (the same culprit, the same
comparison, the same explanation when there is none), and the short-cut is taken."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

from tests.helpers import localize_cases as cases
from workbench.formats.hlo_text import parse_hlo_text
from workbench.model import Step
from workbench.replay.localize.earlier_step import EarlierStep
from workbench.replay.localize.localizer import Localizer
from workbench.replay.localize.pair import StepPair
from workbench.replay.localize.result import DynKey, Localization
from workbench.replay.localize.search import Search

PLANTED = {
    "entry": (cases.ENTRY_BEFORE, cases.ENTRY_AFTER, cases.ENTRY_ARGS),
    "fusion": (cases.FUSION_BEFORE, cases.FUSION_AFTER, cases.FUSION_ARGS),
    "loop": (cases.LOOP_BEFORE, cases.LOOP_AFTER, cases.LOOP_ARGS),
    "reducer": (cases.REDUCE_BEFORE, cases.REDUCE_AFTER, cases.REDUCE_ARGS),
    "late-loop": (cases.LATE_LOOP_BEFORE, cases.LATE_LOOP_AFTER, cases.LATE_LOOP_ARGS),
    "unmatched": (cases.UNMATCHED_BEFORE, cases.UNMATCHED_AFTER, cases.ENTRY_ARGS),
    "identical": (cases.LOOP_BEFORE, cases.LOOP_BEFORE, cases.LOOP_ARGS),
    "fused": (cases.FUSED_BEFORE, cases.FUSED_AFTER, cases.FUSION_ARGS),
}


def _run(before: str, after: str, arguments: list[np.ndarray]) -> Localization:
    step = Step(0, "p", "hlo", "after-pass")
    return Localizer(parse_hlo_text(before), parse_hlo_text(after), arguments).run(step, step)


def _answer(result: Localization) -> dict[str, Any]:
    """Everything a localization says, but its cost."""
    comparison = result.comparison
    return {
        "instruction": result.instruction, "counterpart": result.counterpart,
        "loops": result.culprit_loops, "explanation": result.explanation,
        "departing": result.departing, "matched": result.matched,
        "comparison": None if comparison is None else (
            comparison.ok, comparison.max_abs_error, comparison.mismatches,
            comparison.first_element, comparison.first_index),
        "elements": [(e.index, e.before, e.after, e.truth, e.bound) for e in result.elements],
        "outputs": None if result.outputs is None else result.outputs.ok,
    }


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_values_taken_from_the_earlier_step_give_the_full_path_answer(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The later step takes the earlier step's value of an instruction computed the same way
    on bit-identical operands (`_Search.known`); computing every value gives the same."""
    before, after, arguments = PLANTED[case]
    taken: list[object] = []
    known = Search.known

    def counting(search: Search, key: DynKey) -> Any:
        value = known(search, key)
        if value is not None:
            taken.append(key)
        return value

    monkeypatch.setattr(Search, "known", counting)
    fast = _run(before, after, arguments)
    # Every case has an instruction computed the same way on the same operands but the one
    # whose operands are all new.
    assert bool(taken) == (case != "unmatched")
    monkeypatch.setattr(StepPair, "same_computation", lambda self, key: None)
    taken.clear()
    full = _run(before, after, arguments)
    assert not taken
    assert _answer(fast) == _answer(full)


def _with_chunk(monkeypatch: pytest.MonkeyPatch, chunk: int) -> list[EarlierStep]:
    """Make the earlier step's turns `chunk` values long; the steps made are listed."""
    made: list[EarlierStep] = []
    init = EarlierStep.__init__

    def init_with_chunk(self: EarlierStep, localizer: Localizer) -> None:
        init(self, localizer)
        self.chunk = chunk  # before its first turn: the thread waits for one
        made.append(self)

    monkeypatch.setattr(EarlierStep, "__init__", init_with_chunk)
    return made


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_earlier_step_made_only_as_far_as_needed_gives_the_full_path_answer(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The earlier step evaluated a value at a turn (stopping at the culprit) and in one turn
    (the whole step first) give the same answer; the first makes fewer values when the
    culprit comes before the end."""
    before, after, arguments = PLANTED[case]
    steps = _with_chunk(monkeypatch, 1)
    short = _run(before, after, arguments)
    steps += _with_chunk(monkeypatch, 10**9)
    whole = _run(before, after, arguments)
    assert _answer(short) == _answer(whole)
    # The loop cases depart in an early iteration, the reducer's culprit is not the result.
    stops_early = case in ("loop", "late-loop", "reducer")
    assert (steps[0].made < steps[1].made) == stops_early, (steps[0].made, steps[1].made)


@pytest.mark.parametrize("case", ["loop", "fusion", "identical"])
def test_a_run_frees_its_values_without_a_collection(case: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The observers and shadows refer back to the localizer; the values a run kept (the
    earlier step's and the shadows') are freed when it ends, not at the next collection, but
    those the result holds for the reducer (and the arguments and constants, held by the
    caller and the modules; the f64 copy of the earlier step may outlive the run until a
    collection, so its scalar constants are not counted)."""
    before_text, after_text, arguments = PLANTED[case]
    before, after = parse_hlo_text(before_text), parse_hlo_text(after_text)
    kept: list[weakref.ref[np.ndarray]] = []
    keep = Localizer.keep

    def spying(localizer: Localizer, value: Any) -> None:
        if isinstance(value, np.ndarray) and value.size > 1:  # not a scalar constant's
            kept.append(weakref.ref(value))
        keep(localizer, value)

    monkeypatch.setattr(Localizer, "keep", spying)
    step = Step(0, "p", "hlo", "after-pass")
    gc.collect()
    gc.disable()
    try:
        result = Localizer(before, after, arguments).run(step, step)
        alive = {id(value) for value in (ref() for ref in kept) if value is not None}
    finally:
        gc.enable()
    held = {id(value) for value in (*result.values.values(), *arguments)}
    held |= {id(i.literal) for m in (before, after) for c in m.computations
             for i in c.instructions if i.literal is not None}
    assert len(kept) > len(alive & held)  # values made by the run were kept
    assert alive <= held

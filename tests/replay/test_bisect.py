"""Bisection logic on synthetic step outcomes: the culprit, the evaluation bound, skips and
contradictions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.replay.bisect import BisectState, Mark, evaluation_bound, run_bisect


def judge_from(outcomes: list[Mark], calls: list[int] | None = None):
    def judge(position: int) -> Mark:
        if calls is not None:
            calls.append(position)
        return outcomes[position]
    return judge


def monotone(count: int, culprit: int | None) -> list[Mark]:
    return ["good" if culprit is None or p < culprit else "bad" for p in range(count)]


def test_bound_formula() -> None:
    assert [evaluation_bound(n) for n in (1, 2, 3, 4, 5, 8, 9, 38)] == [1, 3, 4, 4, 5, 5, 6, 8]


@pytest.mark.parametrize("count", range(1, 70))
def test_monotone_finds_every_culprit_within_bound(count: int) -> None:
    for culprit in [None, *range(1, count)]:
        calls: list[int] = []
        result = run_bisect(count, judge_from(monotone(count, culprit), calls))
        assert result.culprit == culprit
        assert result.evaluations == len(calls) == len(set(calls))
        bound = math.ceil(math.log2(count)) + 2
        assert result.evaluations <= bound, (count, culprit, calls)
        assert result.state.contradictions == []
        assert result.state.culprit_range is None


@pytest.mark.parametrize("count", [1, 2, 3, 4, 17])
def test_all_pass_needs_reference_and_last_only(count: int) -> None:
    calls: list[int] = []
    result = run_bisect(count, judge_from(["good"] * count, calls))
    assert result.culprit is None
    assert calls == ([0] if count == 1 else [0, count - 1])
    assert result.state.done and result.state.remaining == 0


@pytest.mark.parametrize("count", [2, 3, 4, 38])
def test_all_fail_after_reference_blames_the_first_step(count: int) -> None:
    result = run_bisect(count, judge_from(["good"] + ["bad"] * (count - 1)))
    assert result.culprit == 1


def test_n2_and_n3_orders() -> None:
    calls: list[int] = []
    assert run_bisect(2, judge_from(["good", "bad"], calls)).culprit == 1
    assert calls == [0, 1]
    calls = []
    assert run_bisect(3, judge_from(["good", "good", "bad"], calls)).culprit == 2
    assert calls == [0, 2, 1]


def test_layernorm_shape_of_problem() -> None:
    # 38 HLO steps (before_optimizations, XLA steps 0..35, after_optimizations); the culprit
    # (XLA step 28) is position 29.
    calls: list[int] = []
    result = run_bisect(38, judge_from(monotone(38, 29), calls))
    assert result.culprit == 29
    assert len(calls) <= 8
    assert calls[:2] == [0, 37]


def test_linear_evaluates_every_step_and_reports_repair() -> None:
    outcomes: list[Mark] = ["good", "good", "bad", "bad", "good", "bad"]
    linear = run_bisect(6, judge_from(outcomes), linear=True)
    assert linear.evaluations == 6
    assert linear.culprit == 2
    assert linear.state.contradictions == [
        "position 4 passes although position 2 before it fails"]


def test_bisect_on_non_monotone_outcomes_names_a_real_transition() -> None:
    # The middle probe lands on a repaired step: bisection cannot see the earlier break, but
    # what it names is a genuine good->bad transition, and linear mode finds the first one.
    outcomes: list[Mark] = ["good", "bad", "good", "good", "good", "bad", "bad"]
    result = run_bisect(7, judge_from(outcomes))
    assert result.culprit == 5 and outcomes[4] == "good"
    linear = run_bisect(7, judge_from(outcomes), linear=True)
    assert linear.culprit == 1
    assert len(linear.state.contradictions) == 3


def test_skipped_midpoint_moves_to_nearest_untested() -> None:
    outcomes: list[Mark] = ["good", "good", "good", "skip", "bad", "bad", "bad", "bad", "bad"]
    calls: list[int] = []
    result = run_bisect(9, judge_from(outcomes, calls))
    assert calls[:3] == [0, 8, 4]
    assert 3 in calls  # tried, skipped
    assert result.state.skipped == [3]
    # Only a skipped step separates the last good (2) from the first bad (4).
    assert result.culprit is None
    assert result.state.culprit_range == (3, 4)


def test_skip_does_not_hide_a_clear_culprit() -> None:
    outcomes: list[Mark] = ["good", "skip", "good", "good", "bad", "bad", "skip", "bad"]
    result = run_bisect(8, judge_from(outcomes))
    assert result.culprit == 4


def test_last_step_skipped_searches_below_it() -> None:
    calls: list[int] = []
    result = run_bisect(5, judge_from(["good", "good", "good", "good", "skip"], calls))
    assert calls == [0, 4, 2, 3]
    assert result.culprit is None and result.state.skipped == [4]
    assert result.state.untested_beyond_frontier == []


def test_every_step_skipped() -> None:
    result = run_bisect(4, judge_from(["good", "skip", "skip", "skip"]))
    assert result.evaluations == 3  # 0, then 3 and 1 are skipped: 2 lies beyond the frontier
    assert result.culprit is None and result.state.first_bad is None
    assert result.state.frontier == 1
    assert result.state.untested_beyond_frontier == [2]


def test_unsupported_tail_costs_log_evaluations_not_one_per_step() -> None:
    # An IREE-like pipeline: 912 steps, evaluable up to 11, unsupported from 12 on.
    outcomes: list[Mark] = ["good"] * 12 + ["skip"] * 900
    result = run_bisect(len(outcomes), judge_from(outcomes))
    assert result.evaluations <= 2 * math.ceil(math.log2(len(outcomes))) + 2
    assert result.state.frontier == 12 and result.state.last_good == 11
    assert result.culprit is None
    # A culprit inside the evaluable prefix is still found.
    outcomes = ["good"] * 7 + ["bad"] * 5 + ["skip"] * 900
    result = run_bisect(len(outcomes), judge_from(outcomes))
    assert result.culprit == 7
    assert result.evaluations <= 2 * math.ceil(math.log2(len(outcomes))) + 2


@given(st.integers(2, 400), st.data())
def test_evaluable_prefix_then_unsupported_tail(count: int, data: st.DataObject) -> None:
    evaluable = data.draw(st.integers(1, count))
    culprit = data.draw(st.none() | st.integers(1, max(1, evaluable - 1)))
    if evaluable == 1:
        culprit = None
    outcomes = monotone(evaluable, culprit) + ["skip"] * (count - evaluable)
    result = run_bisect(count, judge_from(outcomes))
    assert result.culprit == culprit
    assert result.evaluations <= 2 * math.ceil(math.log2(count)) + 2


def test_reference_that_cannot_be_evaluated_stops_everything() -> None:
    calls: list[int] = []
    result = run_bisect(6, judge_from(["skip", "bad", "bad", "bad", "bad", "bad"], calls))
    assert calls == [0]
    assert result.state.reference_failed and result.culprit is None
    linear = run_bisect(6, judge_from(["skip", "bad", "bad", "bad", "bad", "bad"]), linear=True)
    assert linear.evaluations == 1


def test_manual_state_machine() -> None:
    state = BisectState(10)
    assert state.next_position() == 0 and not state.done
    state.mark(0, "good")
    assert state.next_position() == 9
    assert state.remaining == 9
    state.mark(9, "bad")
    assert state.remaining == 8 and state.steps_left == 4  # ceil(log2(8 + 1))
    assert state.next_position() == 4
    state.mark(4, "good")
    assert state.next_position() == 6
    state.mark(6, "skip")
    assert state.next_position() == 5  # 5 and 7 are as near the midpoint; the lower wins
    state.mark(7, "bad")
    assert state.next_position() == 5
    assert state.remaining == 1  # 6 was skipped: only 5 is left to try
    state.mark(5, "good")
    assert state.done and state.culprit is None and state.culprit_range == (6, 7)
    state.mark(6, "bad")  # the user looked at step 6 by hand after all
    assert state.culprit == 6
    assert state.order == [0, 9, 4, 7, 5, 6]  # marking again moves a position to the end


def test_manual_contradiction_is_reported() -> None:
    state = BisectState(5)
    state.mark(0, "good")
    state.mark(2, "bad")
    state.mark(3, "good")
    assert state.contradictions == ["position 3 passes although position 2 before it fails"]


def test_marks_are_validated() -> None:
    state = BisectState(3)
    with pytest.raises(IndexError):
        state.mark(3, "good")
    with pytest.raises(ValueError):
        state.mark(1, "maybe")  # type: ignore[arg-type]  # a mark that is not one, on purpose
    with pytest.raises(ValueError, match="reference"):
        state.mark(0, "bad")
    with pytest.raises(ValueError):
        BisectState(0)


@given(st.lists(st.sampled_from(["good", "bad", "skip"]), min_size=1, max_size=40))
def test_any_outcomes_give_a_real_transition(tail: list[Mark]) -> None:
    outcomes: list[Mark] = ["good", *tail]
    calls: list[int] = []
    result = run_bisect(len(outcomes), judge_from(outcomes, calls))
    assert len(calls) == len(set(calls)) <= len(outcomes)
    state = result.state
    assert all(state.marks[p] == outcomes[p] for p in calls)
    if result.culprit is not None:
        assert outcomes[result.culprit] == "bad" and outcomes[result.culprit - 1] == "good"
    if state.culprit_range is not None:
        first, last = state.culprit_range
        assert outcomes[first - 1] == "good" and outcomes[last] == "bad"
        assert all(outcomes[p] == "skip" for p in range(first, last))
    if "skip" not in outcomes and result.culprit is None:
        assert outcomes[-1] == "good"


@given(st.integers(1, 300), st.data())
def test_bound_holds_for_long_timelines(count: int, data: st.DataObject) -> None:
    culprit = data.draw(st.none() | st.integers(1, max(1, count - 1)))
    if count == 1:
        culprit = None
    result = run_bisect(count, judge_from(monotone(count, culprit)))
    assert result.culprit == culprit
    assert result.evaluations <= evaluation_bound(count)

"""Badges from typed outcomes: what the module and step badges show comes from the verdict's
fields (the culprit pass, the unsupported op, the numbers), not from its text."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.replay_fakes import FakeBackend, make_module
from workbench.replay.bisect import bisect_replay
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.judge.outcome import Kind, Outcome
from workbench.replay.steps import Replay
from workbench.replay.triage.run import TriageResult
from workbench.tui.replay_control import result_status, triage_status, verdict_status
from workbench.tui.status import DETAIL_WIDTH, Status


def replay_of(behaviours: str) -> Replay:
    backend = FakeBackend(Path("/nonexistent"), make_module(behaviours,
                                                            executions=("snapshot.1",)))
    return Replay(backend, resolve_inputs(backend, backend.module.executions[0], InputSpec()))


def test_verdict_badge_names_the_culprit_and_keeps_the_numbers() -> None:
    verdict = bisect_replay(replay_of("good good bad bad"))
    status = verdict_status(verdict)
    # The culprit as the timeline names it: its row, its pass.
    assert (status.state, status.detail, status.text) == ("mismatch", "#2 bad",
                                                          "✗ failing at #2 bad")
    assert status.outcome is not None and status.outcome.comparison is not None
    assert status.outcome.comparison.mismatches == 4
    result = TriageResult("module_0000", "fake", "snapshot.1", verdict.status, verdict=verdict)
    assert triage_status(result) == status


def test_badges_of_steps_that_cannot_be_judged() -> None:
    replay = replay_of("good unsupported error")
    results = replay.run()
    assert [result_status(r).short for r in results] == [
        "✓", "? frobnicate", "! operand 1 has the wrong shape"]
    verdict = bisect_replay(replay_of("good unsupported unsupported"))
    assert verdict_status(verdict).text == "? unsupported: frobnicate"


def test_long_reasons_are_cut_for_the_badge_only() -> None:
    reason = "x" * 200
    status = Status.of(Outcome(Kind.ERROR, reason))
    assert len(status.detail) == DETAIL_WIDTH and status.detail.endswith("…")
    assert status.outcome is not None and status.outcome.reason == reason

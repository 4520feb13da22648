"""Per-step replay with a scripted backend: statuses, streaming, stopping, cancellation and
time limits (in a worker process)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.patience import JOB_TIME_LIMIT
from tests.helpers.replay_fakes import FakeBackend, make_module
from workbench.output.json_shapes import step_result_json, verdict_json
from workbench.replay.bisect import bisect_replay
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.processes.workers import Cancelled
from workbench.replay.steps import InlineRunner, ProcessRunner, Replay, make_runner


def replay_of(behaviours: str, broken_run: bool = False, **options) -> Replay:
    run = "snapshot.-1" if broken_run else "snapshot.1"
    backend = FakeBackend(Path("/nonexistent"), make_module(behaviours, executions=(run,)))
    inputs = resolve_inputs(backend, backend.module.executions[0], InputSpec())
    return Replay(backend, inputs, **options)


def test_statuses_of_each_kind() -> None:
    replay = replay_of("good good bad unsupported error raise")
    seen = []
    results = replay.run(on_result=seen.append)
    assert [r.status for r in results] == [
        "ok", "ok", "mismatch", "unsupported: frobnicate",
        "error: operand 1 has the wrong shape", "error: ZeroDivisionError: division by zero"]
    assert seen == results  # streamed in order
    assert results[2].comparison is not None
    assert results[2].comparison.mismatches == 4 and results[2].comparison.max_abs_error == 1.0
    assert replay.recorded_comparison is not None and replay.recorded_comparison.ok
    assert replay.evaluations == 6
    assert results[1].value is None  # values are not kept unless asked
    assert step_result_json(results[0])["status"] == "ok"


def test_results_are_cached_and_values_kept_on_request() -> None:
    replay = replay_of("good bad", keep_values=True)
    first = replay.evaluate(1)
    assert replay.evaluate(1) is first
    assert replay.evaluations == 2  # the reference, then step 1, once
    np.testing.assert_array_equal(first.value, np.arange(4, dtype=np.float32) * 2 + 1)


def test_stop_after_first_failure() -> None:
    results = replay_of("good good unsupported bad good").run(stop_after_first_failure=True)
    assert [r.kind for r in results] == ["ok", "ok", "unsupported"]


def test_reference_that_fails_stops_the_replay() -> None:
    replay = replay_of("unsupported good good")
    assert [r.status for r in replay.run()] == ["unsupported: frobnicate"]
    assert replay.evaluate(2).status.startswith("error: no reference")
    verdict = bisect_replay(replay_of("unsupported good good"))
    assert verdict.status == "unsupported"
    assert "cannot be evaluated: unsupported: frobnicate" in verdict.detail


def test_recorded_result_differs() -> None:
    replay = replay_of("good good good", broken_run=True)
    replay.run()
    assert replay.recorded_comparison is not None and not replay.recorded_comparison.ok
    verdict = bisect_replay(replay_of("good good good", broken_run=True))
    assert verdict.status == "mismatch" and verdict.culprit is None
    assert verdict.detail.startswith("the recorded result differs from the reference "
                                     "(mismatch: 4 of 4 elements differ")
    assert "but no replayed step does" in verdict.detail
    assert verdict.detail.count("recorded") == 1


def test_tolerance_override_reaches_comparisons() -> None:
    replay = replay_of("good bad", atol=2.0)
    assert replay.evaluate(1).status == "ok"


def test_bisect_verdicts() -> None:
    verdict = bisect_replay(replay_of("good good good bad bad bad bad bad", broken_run=True))
    assert verdict.status == "mismatch"
    assert verdict.culprit is not None and verdict.culprit.step.index == 3
    assert verdict.evaluations <= 5
    assert verdict_json(verdict)["culprit"] == {"index": 3, "pass": "bad", "xla_step": 3,
                                            "file": "module_0001.0003.txt"}
    assert "step 3 (0003 bad) is the first to differ" in verdict.detail
    assert "the recorded result differs from the reference" in verdict.detail

    ok = bisect_replay(replay_of("good good good good"))
    assert ok.status == "ok" and ok.evaluations == 2
    assert "checked 2 of 4 steps" in ok.detail

    last_unsupported = bisect_replay(replay_of("good good good unsupported"))
    assert last_unsupported.status == "unsupported"
    assert [r.step.index for r in last_unsupported.skipped] == [3]

    hidden = bisect_replay(replay_of("good good unsupported bad"))
    assert hidden.status == "mismatch" and hidden.culprit is None
    assert [s.index for s in hidden.candidates] == [2, 3]

    linear = bisect_replay(replay_of("good bad good bad"), linear=True)
    assert linear.culprit is not None and linear.culprit.step.index == 1
    assert linear.contradictions == [
        "step 2 (0002 good) matches the reference again after step 1 (0001 bad) differs"]
    assert "not monotone" in linear.detail
    assert len(linear.results) == linear.evaluations == 4


def test_cancel_between_steps_inline() -> None:
    cancel = threading.Event()
    replay = replay_of("good good good good", cancel=cancel)
    seen = []

    def on_result(result) -> None:
        seen.append(result)
        if result.position == 1:
            cancel.set()

    with pytest.raises(Cancelled):
        replay.run(on_result=on_result)
    assert len(seen) == 2


def test_make_runner() -> None:
    assert isinstance(make_runner(), InlineRunner)
    runner = make_runner(time_limit=3)
    assert isinstance(runner, ProcessRunner)
    runner.close()


def test_worker_process_time_limit_crash_and_recovery() -> None:
    runner = ProcessRunner(time_limit=JOB_TIME_LIMIT)
    with replay_of("good sleep crash bad good", runner=runner) as replay:
        results = replay.run()
    assert [r.status for r in results] == [
        "ok", f"error: time limit of {JOB_TIME_LIMIT:g} s exceeded",
        "error: worker process died (exit status 3)", "mismatch", "ok"]


def test_a_call_says_how_far_it_is_from_a_worker_and_from_this_process() -> None:
    from tests.helpers.replay_fakes import counting_to
    from workbench.replay.processes.workers import WorkerPool, reporting

    heard: list[int] = []
    with WorkerPool(1) as pool:
        outcome = pool.call(counting_to, 3, progress=heard.append)
        assert outcome.value == 3 and heard == [1, 2, 3]
        assert pool.call(counting_to, 2).value == 2  # no one listens: it runs all the same
    with reporting(heard.append):
        counting_to(2)
    assert heard == [1, 2, 3, 1, 2]
    assert counting_to(1) == 1 and heard == [1, 2, 3, 1, 2]  # here, no one listens


def test_worker_process_cancel_stops_a_running_evaluation() -> None:
    cancel = threading.Event()
    with replay_of("good sleep good", runner=ProcessRunner(), cancel=cancel) as replay:
        replay.evaluate(0)
        timer = threading.Timer(0.3, cancel.set)
        timer.start()
        with pytest.raises(Cancelled):  # the sleep would take an hour
            replay.evaluate(1)
        timer.join()


def test_a_result_judged_before_is_not_compared_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.replay.steps as steps

    compared = []

    def counted(*args, **kwargs):
        compared.append(args[1])
        return compare(*args, **kwargs)

    compare = steps.compare
    monkeypatch.setattr(steps, "compare", counted)
    replay = replay_of("good bad bad good")
    first, second, third = (replay.evaluate(position) for position in (1, 2, 3))
    assert [r.status for r in (first, second, third)] == ["mismatch", "mismatch", "ok"]
    assert len(compared) == 2  # the two bad steps made the same bits: judged once
    assert first.comparison is not None and second.comparison is not None
    assert second.comparison is not first.comparison
    assert second.comparison.summary == first.comparison.summary
    second.comparison.relations = "changed by a caller"
    assert first.comparison.relations is None

"""A verdict's independent evaluations side by side (`replay/parallel_verdict.py`): the same
verdict, bounds and noise, bit for bit, serial, on two local workers and on a local Dask
cluster of two processes; the samples' shares merge alike in any order; workers get a
recipe, not arrays, and make the inputs once; fewer run at once when more would not fit.

On the real dump of a one-layer GPT's first AdamW step (`tests/data/noise/gpt_adamw_mini`),
whose verdict needs all three stages: the truth, its perturbed twin and the noise stage.
"""

from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.index import scan
from workbench.output.json_shapes import bisect_json
from workbench.replay import parallel_verdict
from workbench.replay.bisect import bisect_replay
from workbench.replay.judge.compare import NOISE
from workbench.replay.judge.error_bound import widen
from workbench.replay.judge.noise.model import SAMPLES
from workbench.replay.judge.noise.run import noise_from, noise_of, noise_plan, sampled
from workbench.replay.parallel_verdict import LocalWorkers, ParallelVerdict, SharedStep
from workbench.replay.progress import ReplayPhase
from workbench.replay.steps import Replay, open_replay

GPT = Path(__file__).resolve().parents[1] / "data" / "noise" / "gpt_adamw_mini"


def _replay() -> Replay:
    module = next(m for m in scan(GPT).modules if m.key == "module_0022")
    return open_replay(GPT, module, module.executions[0])


def _verdict(parallel: ParallelVerdict | None) -> tuple[dict[str, Any], Any, list[str]]:
    """The linear bisection's JSON (times left out), the truth with the noise stage, and
    what the progress line said of each evaluation."""
    phases: list[ReplayPhase] = []
    with _replay() as replay:
        replay.parallel = parallel
        replay.on_phase = phases.append
        verdict = bisect_replay(replay, linear=True)
        truth = replay.truth(NOISE)
    payload = bisect_json("module_0022", "jit_step", None, "snapshot", verdict)
    for key in ("seconds", "shadow_evaluations", "shadow_seconds"):
        payload.pop(key, None)
    for result in payload["results"]:
        result.pop("seconds", None)
    return payload, truth, [phase.describe() for phase in phases]


def _assert_same_tree(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same_tree(x, y)
    elif a is None:
        assert b is None
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_verdict_is_the_same_serial_on_local_workers_and_on_dask() -> None:
    pytest.importorskip("distributed")
    from workbench.replay.triage.dask_engine import DaskSettings
    from workbench.replay.triage.dask_verdict import DaskWorkers

    serial, serial_truth, serial_phases = _verdict(None)
    assert serial["status"] == "ok" and serial["noise_evaluations"] == 1
    assert serial_truth is not None and serial_truth.widened_by  # the noise stage decided
    assert not any("worker" in phase for phase in serial_phases)
    runs = {"local": lambda: ParallelVerdict(LocalWorkers(2)),
            "dask": lambda: ParallelVerdict(DaskWorkers(DaskSettings(local_workers=2)))}
    for where, make in runs.items():
        payload, truth, phases = _verdict(make())
        assert payload == serial, where
        _assert_same_tree(truth.value, serial_truth.value)
        _assert_same_tree(truth.bound, serial_truth.bound)
        _assert_same_tree(truth.legal_nan, serial_truth.legal_nan)
        assert truth.widened_by == serial_truth.widened_by
        worker = "local workers" if where == "local" else "Dask workers"
        assert f"f64 truth and its perturbed twin on 2 {worker}" in phases, phases
        assert f"random rounding on 2 {worker}" in phases, phases


def test_shares_of_the_samples_merge_into_the_serial_noise_in_any_order() -> None:
    with _replay() as replay:
        module = replay.backend.load(replay.steps[0])  # type: ignore[attr-defined]  # an HLO backend, which loads its steps
        arguments = [widen(a) for a in replay.inputs.arguments]
    serial = noise_of(module, arguments)
    plan = noise_plan(module, arguments)
    assert len(plan.groups) == 1
    shares = [sampled(plan, arguments, 0, share) for share in ((7, 8, 9, 10, 11), (1, 2, 3),
                                                                (4, 5, 6))]
    merged = shares[2].merged(shares[0]).merged(shares[1])
    noise = noise_from(plan, arguments, [merged])
    _assert_same_tree(noise.low, serial.low)
    _assert_same_tree(noise.high, serial.high)
    _assert_same_tree(noise.nan_seen, serial.nan_seen)
    assert noise.discontinuities == serial.discontinuities  # the same order too
    assert noise.left_out == serial.left_out


def test_workers_get_a_recipe_and_make_the_inputs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with _replay() as replay:
        parallel = ParallelVerdict(LocalWorkers(2))
        shared = parallel.shared(replay)
        assert shared is not None and parallel.shared(replay) is shared
        arguments = replay.inputs.arguments
    recipe = len(pickle.dumps(shared))
    data = sum(np.asarray(a).nbytes for a in arguments)
    assert recipe < data / 10, (recipe, data)

    made: list[tuple[Any, ...]] = []
    resolve = parallel_verdict.resolve_inputs

    def counted(*args: Any) -> Any:
        made.append(args)
        return resolve(*args)

    monkeypatch.setattr(parallel_verdict, "resolve_inputs", counted)
    monkeypatch.setattr(parallel_verdict, "_held", {})
    limit = 2**33
    first = parallel_verdict.samples_task(shared, 0, (1,), limit)
    second = parallel_verdict.samples_task(shared, 0, (2, 3), limit)
    truth = parallel_verdict.shadow_task(shared, False)
    assert first.kind == second.kind == truth.kind == "value"
    assert len(made) == 1
    other = SharedStep("another replay", shared.backend, shared.step, shared.spec,
                       shared.execution)
    parallel_verdict.shadow_task(other, True)
    assert len(made) == 2 and list(parallel_verdict._held) == ["another replay"]


def test_fewer_run_at_once_when_more_would_pass_the_memory_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parallel = ParallelVerdict(LocalWorkers(4))
    holds = 100 * 2**20
    monkeypatch.setattr(parallel_verdict, "tree_resident_bytes", lambda: 2 * holds)
    monkeypatch.setattr(parallel_verdict, "memory_limit", lambda: 7 * holds)
    assert parallel.at_once(holds, holds) == (4, "on 4 local workers")
    monkeypatch.setattr(parallel_verdict, "memory_limit", lambda: 5 * holds)
    assert parallel.at_once(holds, holds) == (2, "on 2 local workers (4 at once would pass "
                                                 "--memory-limit 500 MB: 100 MB each)")
    monkeypatch.setattr(parallel_verdict, "memory_limit", lambda: 4 * holds)
    assert parallel.at_once(holds, holds) == (1, "one at a time (4 at once would pass "
                                                 "--memory-limit 400 MB: 100 MB each)")
    parallel.close()


def test_the_truth_and_its_twin_run_one_at_a_time_when_two_would_not_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parallel = ParallelVerdict(LocalWorkers(2))
    with _replay() as replay:
        holds = parallel_verdict._shadow_holds(replay)
        assert holds is not None and holds > 0
        monkeypatch.setattr(parallel_verdict, "tree_resident_bytes", lambda: 0)
        need = parallel_verdict.WORKER_SHARE * holds  # on each worker
        monkeypatch.setattr(parallel_verdict, "memory_limit", lambda: 2 * need - 1)
        assert parallel.truths(replay, lambda *_: None) is None
        monkeypatch.setattr(parallel_verdict, "memory_limit", lambda: 2 * need)
        pair = parallel.truths(replay, lambda *_: None)
        assert pair is not None and pair[0].kind == pair[1].kind == "value"
    parallel.close()


def test_one_at_a_time_the_idle_workers_give_their_memory_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    workers = LocalWorkers(2)
    parallel = ParallelVerdict(workers)
    said: list[str] = []
    with _replay() as replay:
        assert parallel.truths(replay, lambda *_: None) is not None
        assert len(workers.pool._idle) == 2  # they keep the module and the inputs
        monkeypatch.setattr(parallel_verdict, "WORKER_SHARE", 2**40)  # two never fit
        arguments = [widen(a) for a in replay.inputs.arguments]
        assert parallel.noise(replay, arguments, lambda label, *_: said.append(label)) is None
    assert workers.pool._idle == []
    assert said and said[0].startswith("one at a time (2 at once would pass --memory-limit")
    parallel.close()


def killed(*_: object) -> None:
    """A share whose worker is killed (as the kernel kills a process over its memory)."""
    os.kill(os.getpid(), signal.SIGKILL)


def test_when_a_worker_dies_the_stage_runs_again_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    serial, serial_truth, _ = _verdict(None)
    monkeypatch.setattr(parallel_verdict, "samples_task", killed)
    payload, truth, phases = _verdict(ParallelVerdict(LocalWorkers(2)))
    assert payload == serial
    _assert_same_tree(truth.bound, serial_truth.bound)
    assert ("random rounding one at a time (a worker died: worker process died (killed by "
            "SIGKILL))") in phases, phases


def test_an_evaluation_past_the_time_limit_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--time-limit` holds on the workers as it does one evaluation at a time: the worker
    is killed and the evaluation is an error saying so."""
    parallel = ParallelVerdict(LocalWorkers(2))
    monkeypatch.setattr(parallel_verdict, "_time_limit", lambda replay: 1e-3)
    with _replay() as replay:
        pair = parallel.truths(replay, lambda *_: None)
    parallel.close()
    assert pair is not None
    assert [e.kind for e in pair] == ["error", "error"]
    assert all(e.reason == "time limit of 0.001 s exceeded" for e in pair)


@pytest.mark.parametrize(("workers", "expected"), [
    (1, [(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)]),
    (2, [(1, 2, 3, 4, 5, 6), (7, 8, 9, 10, 11)]),
    (12, [(sample,) for sample in range(1, 12)]),
])
def test_each_worker_gets_a_share_of_the_samples_after_sample_0(
        workers: int, expected: list[tuple[int, ...]]) -> None:
    assert SAMPLES == 12
    assert parallel_verdict._shares(SAMPLES, workers) == expected


def test_a_range_of_the_result_on_disk_runs_the_stage_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the stage fits only with its range of the result on disk, the workers would send
    their ranges back whole, in memory: the stage runs one at a time, here, and the verdict
    is the serial one."""
    from dataclasses import replace

    serial, serial_truth, _ = _verdict(None)
    planned = parallel_verdict._Planning.evaluate

    def on_disk(self: Any, step: Any, arguments: Any) -> Any:
        return replace(planned(self, step, arguments), range_on_disk=True)

    monkeypatch.setattr(parallel_verdict._Planning, "evaluate", on_disk)
    payload, truth, phases = _verdict(ParallelVerdict(LocalWorkers(2)))
    assert payload == serial
    _assert_same_tree(truth.bound, serial_truth.bound)
    assert "random rounding one at a time (the range of the result is kept on disk)" in phases

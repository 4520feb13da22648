"""Triage over a dump of scripted modules: statuses, parallel workers, time limits, streaming
and cancellation."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.helpers.patience import JOB_TIME_LIMIT
from tests.helpers.replay_fakes import FAKE, make_module
from workbench.model import Dump
from workbench.output.json_shapes import triage_result_json
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.culprit import Culprit
from workbench.replay.triage.run import TriageOptions, triage, triage_jobs


def fake_dump() -> Dump:
    return Dump(Path("/nonexistent"), modules=[
        make_module("good good good good", "module_0001"),
        make_module("good good bad bad bad", "module_0002", ("snapshot.1", "snapshot.-1")),
        make_module("good good unsupported", "module_0003"),
        make_module("good good", "module_0004", executions=()),
    ])


def by_key(results) -> dict:
    return {(r.module, r.execution): r for r in results}


def test_triage_in_process() -> None:
    results = triage(fake_dump(), TriageOptions(backend=FAKE), jobs=0)
    assert [(r.module, r.execution) for r in results] == [
        ("module_0001", "snapshot.1"), ("module_0002", "snapshot.-1"),
        ("module_0002", "snapshot.1"), ("module_0003", "snapshot.1")]
    found = by_key(results)
    assert found["module_0001", "snapshot.1"].status == "ok"
    broken = found["module_0002", "snapshot.-1"]
    assert broken.status == "mismatch"
    assert broken.culprit == Culprit(2, "bad", 2, "module_0002.0002.txt")
    assert broken.evaluations <= 5
    assert found["module_0003", "snapshot.1"].status == "unsupported"
    payload = triage_result_json(broken)
    assert set(payload) >= {"module", "name", "execution", "status", "culprit", "evaluations",
                            "detail"}
    assert payload["name"] == "jit_fake"


def test_fake_data_jobs_for_modules_without_executions() -> None:
    dump = fake_dump()
    assert len(triage_jobs(dump)) == 4
    jobs = triage_jobs(dump, InputSpec(fake_data=True))
    assert [(j.module.key, j.execution) for j in jobs][-1] == ("module_0004", None)
    results = triage(dump, TriageOptions(backend=FAKE, inputs=InputSpec(fake_data=True)),
                     jobs=0)
    fake = by_key(results)["module_0004", None]
    assert fake.status == "ok" and "fake data (seed 0)" in fake.detail


def test_results_keep_each_judged_step_without_its_value() -> None:
    """A report plots every evaluated step's numbers: they come back from the workers, the
    literals (the reference's value among them) do not."""
    results = triage(fake_dump(), TriageOptions(backend=FAKE), jobs=2, time_limit=30)
    broken = by_key(results)["module_0002", "snapshot.-1"]
    assert broken.verdict is not None
    judged = sorted((r.position, str(r.kind)) for r in broken.verdict.results)
    assert (2, "mismatch") in judged and (0, "ok") in judged
    assert len(judged) == broken.evaluations
    assert all(r.value is None for r in broken.verdict.results)


def test_triage_in_worker_processes_streams_results() -> None:
    seen = []
    results = triage(fake_dump(), TriageOptions(backend=FAKE), jobs=2, time_limit=30,
                     on_result=seen.append)
    assert sorted(r.status for r in seen) == sorted(r.status for r in results)
    assert len(results) == 4
    assert by_key(results)["module_0002", "snapshot.-1"].culprit.index == 2


def test_job_time_limit_and_crash() -> None:
    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good sleep", "module_0001"),
        make_module("good crash", "module_0002"),
        make_module("good bad", "module_0003"),
    ])
    results = by_key(triage(dump, TriageOptions(backend=FAKE), jobs=2,
                            time_limit=JOB_TIME_LIMIT))
    assert results["module_0001", "snapshot.1"].status == "error"
    assert results["module_0001", "snapshot.1"].detail == \
        f"time limit of {JOB_TIME_LIMIT:g} s per job exceeded"
    assert results["module_0002", "snapshot.1"].status == "error"
    assert results["module_0002", "snapshot.1"].detail == "worker process died (exit status 3)"
    assert results["module_0003", "snapshot.1"].status == "mismatch"


def test_cancel_stops_running_jobs() -> None:
    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good sleep", f"module_000{i}") for i in range(4)])
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    results = triage(dump, TriageOptions(backend=FAKE), jobs=2, cancel=cancel)  # sleepers: an hour
    timer.join()
    assert results == []


def test_unknown_backend_is_unsupported() -> None:
    results = triage(fake_dump(), TriageOptions(backend="nosuch"), jobs=0)
    assert {r.status for r in results} == {"unsupported"}
    assert "no replay backend named 'nosuch'" in results[0].detail


@pytest.mark.parametrize("jobs", [0, 1])
def test_backend_bugs_become_errors(jobs: int) -> None:
    dump = Dump(Path("/nonexistent"), modules=[
        make_module("good bad", "module_0001", ("snapshot.-2", "snapshot.1"))])
    results = by_key(triage(dump, TriageOptions(backend=FAKE), jobs=jobs))
    assert results["module_0001", "snapshot.-2"].status == "error"
    assert results["module_0001", "snapshot.-2"].detail == "RuntimeError: a bug in the backend"
    assert results["module_0001", "snapshot.1"].status == "mismatch"
    missing = triage(dump, TriageOptions(backend="replay_fakes:nothing_here"), jobs=jobs)
    assert {r.status for r in missing} == {"unsupported"}
    assert "cannot load the replay backend 'replay_fakes:nothing_here'" in missing[0].detail

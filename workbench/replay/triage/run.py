"""Triage a whole dump: bisect every module x execution, in parallel worker processes.

Each job (one execution of one module) runs in a worker process with a time limit; results
stream back as jobs finish, and a cancel request kills what runs. Modules without an
execution are replayed on fake data only when asked (`InputSpec(fake_data=True)`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.model import Dump
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.outcome import Kind
from workbench.replay.triage.job import (
    TriageJob,
    TriageOptions,
    TriageResult,
    run_job,
)

if TYPE_CHECKING:
    from workbench.replay.triage.dask_engine import DaskSettings
    from workbench.replay.triage.results_cache import ResultsCache


def triage_jobs(dump: Dump, inputs: InputSpec | None = None) -> list[TriageJob]:
    """Every module x execution; a module with none gets one fake-data job if asked."""
    inputs = inputs or InputSpec()
    jobs: list[TriageJob] = []
    for module in dump.modules:
        if module.executions:
            jobs.extend(TriageJob(module, execution) for execution in module.executions)
        elif inputs.fake_data:
            jobs.append(TriageJob(module, None))
    return jobs


def sort_key(result: TriageResult) -> tuple:
    return (result.module, result.execution or "")


def _look_up(dump: Dump, work: list[TriageJob], options: TriageOptions,
              cache: ResultsCache) -> tuple[list[TriageResult], list[TriageJob], dict[int, str]]:
    """The results `cache` holds, the jobs it has none for, and every job's key (by id)."""
    hashes = cache.hashes(dump.root)
    cache.load_pack(dump.root)
    hits, remaining, keys = [], [], {}
    for job in work:
        key = keys[id(job)] = cache.key(job, options, hashes)
        hit = cache.get(key, job)
        if hit is None:
            remaining.append(job)
        else:
            hits.append(hit)
    hashes.save()
    return hits, remaining, keys


def _fail_unreadable(dump: Dump, work: list[TriageJob],
                     report: Callable[[TriageResult], None]) -> list[TriageJob]:
    """The jobs whose files can all be read; the others are reported as errors naming the
    file the listing found unreadable (a FIFO, a dangling link, a link out of the dump):
    bisecting a timeline with a step missing could name the wrong pass."""
    unreadable = {p.file: p.reason for p in dump.problems if p.unreadable}
    if not unreadable:
        return work
    readable = []
    for job in work:
        needed = job.module.step_files()
        if job.execution is not None:
            needed.add(job.execution.file)
        bad = sorted(needed & unreadable.keys())
        if not bad:
            readable.append(job)
            continue
        detail = f"cannot read {bad[0]}: {unreadable[bad[0]]}"
        if len(bad) > 1:
            detail += f" (and {len(bad) - 1} more unreadable file(s))"
        report(TriageResult(job.module.key, job.module.name,
                            job.execution.id if job.execution else None, Kind.ERROR,
                            detail=detail, steps=len(job.module.steps)))
    return readable


def cached_results(dump: Dump, cache: ResultsCache,
                   options: TriageOptions | None = None) -> list[TriageResult]:
    """What `cache` already knows of `dump`'s triage, evaluating nothing: a reopened dump's
    badges at once."""
    options = options or TriageOptions()
    failed: list[TriageResult] = []
    work = _fail_unreadable(dump, triage_jobs(dump, options.inputs), failed.append)
    return failed + _look_up(dump, work, options, cache)[0]


def triage(dump: Dump, options: TriageOptions | None = None, jobs: int = 1,
           time_limit: float | None = None,
           on_result: Callable[[TriageResult], None] | None = None,
           cancel: threading.Event | None = None, nice: int = 0,
           cache: ResultsCache | None = None,
           dask: DaskSettings | None = None) -> list[TriageResult]:
    """Bisect every module x execution of `dump`; results sorted by module and execution.

    `jobs` worker processes run at once (0: in this process, with no time limit and
    cancellation only between jobs), `nice` lowers their priority (a UI keeps the CPU);
    with `dask` the jobs run as tasks on a Dask cluster instead. `time_limit` is per job, in
    seconds. `on_result` sees each result as its job finishes. Results found in `cache` are
    not evaluated again, and new verdicts are stored there. Cancelled jobs are left out of
    the results.
    """
    options = options or TriageOptions()
    work = triage_jobs(dump, options.inputs)
    results: list[TriageResult] = []

    def report(result: TriageResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    work = _fail_unreadable(dump, work, report)
    keys: dict[int, str] = {}
    if cache is not None:
        hits, work, keys = _look_up(dump, work, options, cache)
        for hit in hits:
            report(hit)
    # Longest first (most steps), so one big module does not start last and run alone.
    work.sort(key=lambda job: -len(job.module.steps))
    by_result: dict[tuple[str, str | None], TriageJob] = {
        (job.module.key, job.execution.id if job.execution else None): job for job in work}

    def finish(result: TriageResult) -> None:
        job = by_result.get((result.module, result.execution))
        if cache is not None and job is not None:
            cache.put(keys[id(job)], result)
        report(result)

    def failed(job: TriageJob, detail: str, seconds: float = 0.0) -> None:
        report(TriageResult(job.module.key, job.module.name,
                            job.execution.id if job.execution else None, Kind.ERROR,
                            detail=detail, steps=len(job.module.steps), seconds=seconds))

    try:
        _evaluate(dump.root, work, options, jobs, time_limit, finish, failed, cancel, nice, dask)
    finally:
        if cache is not None:
            cache.save_pack(dump.root)  # what was done, even when cancelled
    return sorted(results, key=sort_key)


def _evaluate(root: Path, work: list[TriageJob], options: TriageOptions, jobs: int,
              time_limit: float | None, finish: Callable[[TriageResult], None],
              failed: Callable[..., None], cancel: threading.Event | None, nice: int,
              dask: DaskSettings | None) -> None:
    """Run `work` in this process, in worker processes or on Dask; each job ends in `finish`
    (its result) or `failed` (why there is none)."""
    if dask is not None:
        from workbench.replay.triage.dask_engine import run_on_dask

        run_on_dask(root, work, options, dask, time_limit, finish, failed, cancel)
        return
    if jobs == 0:
        for job in work:
            if cancel is not None and cancel.is_set():
                break
            try:
                finish(run_job(root, job, options))
            except Exception as error:  # a backend bug: report it as the job's error
                failed(job, f"{type(error).__name__}: {error}")
        return
    if not work:
        return

    from workbench.replay.processes.workers import Call, WorkerPool
    from workbench.replay.processes.workers import Outcome as CallOutcome

    by_key: dict[Hashable, TriageJob] = dict(enumerate(work))

    def on_outcome(outcome: CallOutcome) -> None:
        job = by_key[outcome.key]
        if outcome.ok:
            finish(outcome.value)
            return
        if outcome.cancelled:
            return
        if outcome.timed_out:
            detail = f"time limit of {time_limit:g} s per job exceeded"
        else:
            assert outcome.error is not None
            detail = outcome.error.strip().splitlines()[-1]
        failed(job, detail, outcome.seconds)

    calls = [Call(index, run_job, (root, job, options)) for index, job in by_key.items()]
    with WorkerPool(max(1, min(jobs, len(calls))), nice=nice) as pool:
        pool.run(calls, on_outcome=on_outcome, time_limit=time_limit, cancel=cancel)

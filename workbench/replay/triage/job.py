"""One triage job: bisect one execution of one module, in whatever process runs it (a worker
of this machine's pool, a Dask task), and what it comes to."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.model import Execution, Module
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.culprit import Culprit
from workbench.replay.judge.outcome import Kind, Outcome

if TYPE_CHECKING:
    from workbench.replay.bisect import Verdict


@dataclass(frozen=True)
class TriageOptions:
    linear: bool = False
    atol: float | None = None
    rtol: float | None = None
    inputs: InputSpec = field(default_factory=InputSpec)
    backend: str | None = None
    localize: bool = False  # add the culprit instruction to the culprit (`--localize`)


@dataclass
class TriageJob:
    module: Module
    execution: Execution | None


@dataclass
class TriageResult:
    """One execution's triage: the bisection's verdict, or why there is none (`detail`)."""

    module: str
    name: str
    execution: str | None
    status: Kind
    culprit: Culprit | None = None
    evaluations: int = 0
    detail: str = ""
    seconds: float = 0.0
    steps: int = 0
    verdict: Verdict | None = None
    cached: bool = False  # taken from the results cache, not evaluated in this run

    @property
    def outcome(self) -> Outcome:
        if self.verdict is not None:
            return self.verdict.outcome
        return Outcome(self.status, self.detail)


def run_job(root: Path, job: TriageJob, options: TriageOptions) -> TriageResult:
    """Bisect one execution in this process; every failure becomes the result's status."""
    from workbench.loader import ReadError
    from workbench.replay.backends import NoBackend
    from workbench.replay.bisect import bisect_replay
    from workbench.replay.inputs import InputError
    from workbench.replay.steps import open_replay

    start = time.perf_counter()
    module = job.module
    result = TriageResult(module.key, module.name, job.execution.id if job.execution else None,
                          Kind.ERROR)
    spec = options.inputs if job.execution is None else InputSpec()
    try:
        replay = open_replay(root, module, job.execution, spec, backend=options.backend,
                             atol=options.atol, rtol=options.rtol)
    except NoBackend as error:
        result.status, result.detail = Kind.UNSUPPORTED, str(error)
        return result
    except (InputError, ReadError) as error:
        result.detail = f"cannot read the inputs: {error}"
        result.seconds = time.perf_counter() - start
        return result
    result.steps = len(replay.steps)
    with replay:
        verdict = bisect_replay(replay, linear=options.linear)
    result.status = verdict.status
    if verdict.culprit is not None:
        result.culprit = Culprit.of_step(verdict.culprit.step, root)
    if options.localize and result.culprit is not None:
        from workbench.replay.localize.culprit import localized_culprit

        result.culprit = localized_culprit(result.culprit, replay, verdict)
    result.evaluations = verdict.evaluations
    result.detail = verdict.detail
    # Each judged step's verdict and numbers travel with the result (a report plots them);
    # its literal stays in the worker.
    verdict.results = [replace(r, value=None) for r in verdict.results]
    result.verdict = verdict
    result.seconds = time.perf_counter() - start
    return result

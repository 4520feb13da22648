"""A verdict's independent evaluations side by side, on this machine's worker processes or on
a Dask cluster (`triage/dask_verdict.py`).

A training step's verdict takes about 17 evaluations of the reference: the truth in f64 and
its twin on perturbed inputs, and the noise stage's random-rounding samples and split
sample. The truth and its twin are independent: they run at once. The samples are
independent but for sample 0, which every later sample is compared with (its discrete
outputs, its NaNs, its dots' accumulation spreads): each worker runs sample 0 and then its
share of the others, and returns the ranges it saw; the parent merges the shares as they
arrive (minima, maxima and largest counts: the same in any order) and runs the split
sample, which reads the ranges of all of them. The verdict is the one a serial run reaches,
bit for bit: every sample has its fixed seed wherever it runs.

Workers receive a recipe, not data (`SharedStep`: the backend, that is the dump's path and
the module, the reference step, and how the inputs were made); each loads the step and
makes the inputs itself (fake data again from its seed, a snapshot read from the dump) once
per replay, and keeps them for the replay's next evaluations (`held_arguments`).

Memory: every worker holds its own copy of the step, the inputs and one evaluation. Before
the samples start, the stage's plan (`noise_plan`) says what one evaluation of it holds;
with the memory the process tree holds now and the parent's own share (the merged ranges,
then the split sample), as many run at once as fit within `--memory-limit`, one at least,
and the progress line says when that is fewer than the workers. The truth and its twin
run at once only when two fit; else one at a time, as without workers.
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from workbench.hlo_ir import LiteralValue
from workbench.model import Execution, Step
from workbench.replay.backends import Backend
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.processes.memory import return_freed_memory
from workbench.replay.processes.workers import Call, Cancelled, Outcome, WorkerPool
from workbench.replay.progress import noise_units, tree_resident_bytes, truth_units
from workbench.replay.steps import Evaluation, ShadowBackend, evaluate_step
from workbench.sizes import format_size, memory_limit

if TYPE_CHECKING:
    from workbench.replay.judge.noise.run import NoisePlan, Sampled
    from workbench.replay.steps import Replay


@dataclass(frozen=True)
class SharedStep:
    """What every evaluation of one replay's verdict starts from, as a recipe each worker
    follows once (`held_arguments`): `key` names the replay."""

    key: str
    backend: Backend
    step: Step
    spec: InputSpec
    execution: Execution | None


# ------------------------------------------------------------------------- on a worker

_held: dict[str, list[LiteralValue]] = {}  # the latest replay's arguments, by its key
_plans: dict[tuple[str, int], NoisePlan] = {}  # and its noise stage's plan, by memory limit


def held_arguments(shared: SharedStep) -> list[LiteralValue]:
    """The replay's arguments, made here from the recipe on first use and kept for its later
    evaluations (a worker keeps one replay's: a new one drops the last one's)."""
    arguments = _held.get(shared.key)
    if arguments is None:
        _held.clear()
        _plans.clear()
        return_freed_memory()
        arguments = resolve_inputs(shared.backend, shared.execution, shared.spec).arguments
        _held[shared.key] = arguments
    return arguments


def shadow_task(shared: SharedStep, perturbed: bool) -> Evaluation:
    """The reference in f64 on the widened inputs, or on the perturbed ones."""
    from workbench.replay.judge.error_bound import perturb, widen

    raw = held_arguments(shared)
    arguments = perturb(raw) if perturbed else [widen(a) for a in raw]
    return evaluate_step(ShadowBackend(shared.backend), shared.step, arguments)


@dataclass(frozen=True)
class _Sampling:
    """A share of the random samples of one group of the noise stage, as a step evaluator
    (its failures become an `Evaluation` as a step's do)."""

    shared: SharedStep
    group: int
    samples: tuple[int, ...]
    limit: int

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> Any:
        """The share's `Sampled`."""
        from workbench.replay.judge.noise.run import noise_plan, sampled

        key = (self.shared.key, self.limit)
        plan = _plans.get(key)
        if plan is None:
            backend: Any = self.shared.backend
            plan = _plans[key] = noise_plan(backend.load(step), arguments, self.limit,
                                            spill=False)  # as the parent's (`noise`)
        return sampled(plan, arguments, self.group, self.samples)


def samples_task(shared: SharedStep, group: int, samples: tuple[int, ...],
                 limit: int) -> Evaluation:
    """Sample 0 and `samples` of the noise stage's `group`, on the widened inputs."""
    from workbench.replay.judge.error_bound import widen

    arguments = [widen(a) for a in held_arguments(shared)]
    return evaluate_step(_Sampling(shared, group, samples, limit), shared.step, arguments)


# ---------------------------------------------------------------------- where they run

Task = tuple[Callable[..., Evaluation], tuple]


class Executor(Protocol):
    """Worker processes that run tasks `function(shared, *args)`, each returning an
    `Evaluation`. `in_tree`: the workers are this process's descendants, so their memory
    is counted in this process tree's `--memory-limit`."""

    workers: int
    in_tree: bool

    def describe(self, at_once: int) -> str:
        """`on 2 local workers`: where `at_once` tasks run."""
        ...

    def run(self, shared: SharedStep, tasks: list[Task],
            done: Callable[[int, Evaluation], None], at_once: int,
            cancel: threading.Event | None, time_limit: float | None) -> None:
        """Run `tasks`, at most `at_once` at a time; `done(index, evaluation)` for each as
        it finishes (an error past `time_limit` seconds, where the workers can be stopped).
        Raises `Cancelled` when `cancel` is set meanwhile."""
        ...

    def release(self) -> None:
        """Give back the memory idle workers hold (on this machine: stop them; started
        again when next needed)."""
        ...

    def close(self) -> None: ...


class LocalWorkers:
    """This machine's worker processes (`processes/workers.py`), started on first use."""

    in_tree = True

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool = WorkerPool(workers)

    def describe(self, at_once: int) -> str:
        return f"on {at_once} local worker{'s' if at_once > 1 else ''}"

    def run(self, shared: SharedStep, tasks: list[Task],
            done: Callable[[int, Evaluation], None], at_once: int,
            cancel: threading.Event | None, time_limit: float | None) -> None:
        def finished(outcome: Outcome) -> None:
            if outcome.cancelled:
                return
            assert isinstance(outcome.key, int)
            if outcome.timed_out:
                reason = f"time limit of {time_limit:g} s exceeded"
            elif outcome.error is not None:
                # A traceback's last line names the exception; a dead worker's is one line.
                reason = outcome.error.strip().splitlines()[-1]
            else:
                done(outcome.key, outcome.value)
                return
            done(outcome.key, Evaluation("error", reason=reason, seconds=outcome.seconds))

        calls = [Call(index, function, (shared, *args))
                 for index, (function, args) in enumerate(tasks)]
        outcomes = self.pool.run(calls, finished, time_limit=time_limit, cancel=cancel,
                                 at_once=at_once)
        if any(outcome.cancelled for outcome in outcomes):
            raise Cancelled()

    def release(self) -> None:
        self.pool.close()  # stops the idle workers; the pool starts new ones when needed

    def close(self) -> None:
        self.pool.close()


# ------------------------------------------------------------------------- the verdict


class ParallelVerdict:
    """`steps.ParallelEvaluations` on an `Executor`: the truth with its twin, and the noise
    stage's samples in shares, side by side."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.workers = executor.workers
        self._shared: tuple[Replay, SharedStep] | None = None

    def close(self) -> None:
        self.executor.close()

    def shared(self, replay: Replay) -> SharedStep | None:
        """The replay's recipe (one key per replay), or None when the workers cannot make
        its inputs themselves or its backend cannot hand out the module."""
        if self._shared is not None and self._shared[0] is replay:
            return self._shared[1]
        inputs = replay.inputs
        if inputs.spec is None or not replay.steps or not hasattr(replay.backend, "load"):
            return None
        shared = SharedStep(uuid.uuid4().hex, replay.backend, replay.steps[0], inputs.spec,
                            inputs.execution)
        self._shared = (replay, shared)
        return shared

    def truths(self, replay: Replay, started: Callable[[str, float], None]
               ) -> tuple[Evaluation, Evaluation] | None:
        shared = self.shared(replay)
        if shared is None or self.workers < 2:
            return None
        holds = _shadow_holds(replay)
        if holds is None or self.at_once(WORKER_SHARE * holds, 0)[0] < 2:
            return None  # one at a time, the twin only if the bound needs it
        started(f"and its perturbed twin {self.executor.describe(2)}", truth_units(2))
        found: dict[int, Evaluation] = {}
        self.executor.run(shared, [(shadow_task, (False,)), (shadow_task, (True,))],
                          found.__setitem__, 2, replay.cancel, _time_limit(replay))
        return found[0], found[1]

    def noise(self, replay: Replay, arguments: list[LiteralValue],
              started: Callable[[str, float, float], None]) -> Evaluation | None:
        """The stage in shares on the workers; None, having said why, where it runs one at a
        time instead: when two shares would not fit, or a worker died (killed for memory,
        most likely), the stage runs again as without workers."""
        from workbench.replay.judge.noise.model import SAMPLES

        shared = self.shared(replay)
        if shared is None:
            return None
        planning = evaluate_step(_Planning(replay.backend), shared.step, arguments)
        if planning.kind != "value":
            return planning  # the stage cannot run (over the memory limit): it says why
        plan = cast("NoisePlan", planning.value)
        if plan.range_on_disk or plan.on_disk:  # a worker would send them back in memory
            self.executor.release()
            kept = ("the range of the result is" if plan.range_on_disk
                    else "what the split sample reads is partly")
            started(f"one at a time ({kept} kept on disk)", noise_units(1), 0.0)
            return None
        # The parent keeps the merged ranges, then runs the split sample: one share's worth.
        at_once, where = self.at_once(WORKER_SHARE * plan.holds, plan.holds)
        if at_once < 2:
            self.executor.release()  # their memory is the stage's, one at a time
            started(where, noise_units(1), 0.0)
            return None
        stage = _Stage(self, replay, shared, plan, _shares(SAMPLES, at_once), at_once,
                       started, where)
        evaluation = evaluate_step(stage, shared.step, arguments)  # a worker's failure too
        if replay.cancel is not None and replay.cancel.is_set():
            raise Cancelled()
        if stage.died is not None:
            self.executor.release()
            started(f"one at a time (a worker died: {stage.died})", noise_units(1), 0.0)
            return None
        evaluation.seconds += stage.seconds
        return evaluation

    def at_once(self, each: int, parent: int) -> tuple[int, str]:
        """How many evaluations that each need `each` bytes on a worker may run at once,
        with `parent` bytes more kept here, and how the progress line says so: under two,
        they run one at a time, as without workers."""
        workers = self.workers
        if not self.executor.in_tree:
            return workers, self.executor.describe(workers)
        limit = memory_limit()
        room = limit - (tree_resident_bytes() or 0) - parent
        fit = max(1, min(workers, room // max(1, each)))
        where = self.executor.describe(fit) if fit > 1 else "one at a time"
        if fit < workers:
            where += (f" ({workers} at once would pass --memory-limit {format_size(limit)}: "
                      f"{format_size(each)} each)")
        return fit, where


# What a worker holds at most, in evaluations' own estimates (from declared shapes): its
# reply is pickled whole beside the values it copies, and it keeps the module and inputs.
WORKER_SHARE = 2


@dataclass(frozen=True)
class _Planning:
    """The noise stage's plan in the parent, as a step evaluator (an `OverMemoryLimit`
    becomes the `Evaluation` one at a time would give)."""

    backend: Backend

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> Any:
        from workbench.replay.judge.noise.run import noise_plan

        backend: Any = self.backend
        return noise_plan(backend.load(step), arguments, memory_limit())


class _Stage:
    """The noise stage as a step evaluator run in the parent (its failures become an
    `Evaluation`): the shares on the workers merged as they arrive, then each group's split
    sample here."""

    def __init__(self, parallel: ParallelVerdict, replay: Replay, shared: SharedStep,
                 plan: NoisePlan, shares: list[tuple[int, ...]], at_once: int,
                 started: Callable[[str, float, float], None], where: str) -> None:
        self.parallel = parallel
        self.started = started  # told of each group as it starts (`_groups`)
        self.where = where  # on which workers, as the progress line says
        self.replay = replay
        self.shared = shared
        self.plan = plan
        self.shares = shares
        self.at_once = at_once
        self.failed: Evaluation | None = None  # the first share that failed
        self.died: str | None = None  # why a worker died, if one did
        self.seconds = 0.0  # the workers' time

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> Any:
        """The stage's `Noise`."""
        from workbench.replay.judge.noise.run import noise_from

        return noise_from(self.plan, arguments, self._groups())

    def _groups(self) -> Iterator[Sampled]:
        """Each group's samples, one group at a time (the parent holds one group's ranges,
        as a serial run does), each said as it starts with the units of the groups after it."""
        groups = len(self.plan.groups)
        units = noise_units(self.at_once)
        for group in range(groups):
            self.started(self.where + (f", group {group + 1} of {groups}" if groups > 1 else ""),
                         units, (groups - group - 1) * units)
            yield self._group(group)

    def _group(self, group: int) -> Sampled:
        """One group's samples: its shares on the workers, merged as they arrive."""
        merged: list[Sampled] = []

        def done(_: int, evaluation: Evaluation) -> None:
            self.seconds += evaluation.seconds
            if evaluation.kind != "value":
                self.failed = self.failed or evaluation
                return
            part = cast("Sampled", evaluation.value)
            if merged:
                merged[0].merged(part)
            else:
                merged.append(part)

        limit = memory_limit()
        tasks: list[Task] = [(samples_task, (group, share, limit)) for share in self.shares]
        self.parallel.executor.run(self.shared, tasks, done, self.at_once, self.replay.cancel,
                                   _time_limit(self.replay))
        if self.failed is not None:
            reason = self.failed.reason
            if reason.startswith(DIED):
                self.died = reason
            if self.failed.kind == "unsupported":
                raise Unsupported(reason)
            raise EvaluationError(reason)
        return merged[0]


# How an evaluation whose worker process died ends (`processes/workers.py`; Dask's
# KilledWorker once its scheduler gave up on the task).
DIED = ("worker process died", "KilledWorker")


def _time_limit(replay: Replay) -> float | None:
    """The time one evaluation may take (`--time-limit`: the replay's runner's)."""
    limit = getattr(replay.runner, "time_limit", None)
    return None if limit is None else float(limit)


def _shadow_holds(replay: Replay) -> int | None:
    """The most bytes one evaluation of the reference in f64 holds, from declared shapes;
    None when that cannot be told (the evaluation then says why, one at a time)."""
    from workbench.loader import ReadError
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.hlo.shadow import shadow_module

    backend: Any = replay.backend
    try:
        shadow = shadow_module(backend.load(replay.steps[0]))
        return Interpreter(shadow).holds_at_once(shadow.entry_name)
    except (Unsupported, EvaluationError, ReadError):
        return None


def _shares(samples: int, workers: int) -> list[tuple[int, ...]]:
    """Samples 1 to `samples` - 1 in `workers` runs of nearly equal length (each worker runs
    sample 0 besides)."""
    rest = list(range(1, samples))
    size = math.ceil(len(rest) / max(1, workers)) or 1
    return [tuple(rest[start:start + size]) for start in range(0, len(rest), size)] or [()]


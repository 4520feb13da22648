"""Per-step replay of one execution: evaluate steps on the inputs, judge each against the
reference.

The reference is the result of the first replayable step; each later step is `ok` when its
result matches the reference, `mismatch` when it does not, `unsupported: <what>` when the
evaluator cannot do it, `error: <reason>` when it fails otherwise (an `Outcome`). The
reference itself is compared with the execution's recorded result: a difference there means
the real run misbehaved (or the evaluator deviates from the compiler).

"Matches" means: within the fixed per-dtype tolerance of the strictly rounded reference, or
else within the rounding error bound of the truth, the reference evaluated in f64 (see
`error_bound.py`). The truth costs one or two evaluations of the reference in f64 (on the
inputs; on slightly perturbed inputs only when the first is not enough), each made once per
replay and only when some result is beyond the tolerance; `shadow_evaluations` counts them.
An explicit `atol`/`rtol` judges by that tolerance alone. A backend without `evaluate_shadow`
(or a module its shadow cannot do) is judged by the tolerance alone, and the comparison says
why.

Where evaluation happens is a `Runner`'s business: `InlineRunner` evaluates in this process
(fastest; cancellation is seen between steps only), `ProcessRunner` in a worker process that
is killed at the time limit or on cancel, which is what a UI needs (see `workers.py`). A
verdict's independent evaluations (the truth with its twin, the random-rounding samples) may
run side by side on several workers (`ParallelEvaluations`, `parallel_verdict.py`).
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from workbench.hlo_ir import LiteralValue
from workbench.model import Execution, Module, Step
from workbench.replay.backends import (
    Backend,
    EvaluatesFlushed,
    FlushedBackend,
    NoiseBackend,
    ShadowBackend,
    StepEvaluator,
    open_backend,
)
from workbench.replay.deadline import DidNotFinish, evaluation_deadline
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.inputs import (
    EntryParameters,
    InputError,
    InputSpec,
    ReplayInputs,
    entry_parameters,
    resolve_inputs,
)
from workbench.replay.judge.compare import NOISE, Comparison, Stage, Truth, compare, digest
from workbench.replay.judge.outcome import Kind, Outcome
from workbench.replay.processes.memory import OverMemoryLimit, return_freed_memory
from workbench.replay.processes.workers import Cancelled, WorkerPool, reporting
from workbench.replay.progress import (
    FLUSHED,
    NOISE_STAGE,
    PERTURBED_TRUTH,
    REFERENCE,
    STEP,
    TRUTH,
    PhaseClock,
    ReplayPhase,
    noise_units,
    truth_units,
)


@dataclass
class Evaluation:
    """How evaluating one step ended: a value, or `unsupported`/`error`/`did-not-finish`
    with the reason."""

    kind: str  # "value", "unsupported", "error", "did-not-finish" (`deadline.py`)
    value: LiteralValue | None = None
    reason: str = ""
    seconds: float = 0.0
    over_memory_limit: bool = False  # an error because it would not fit `--memory-limit`


def evaluate_step(backend: StepEvaluator, step: Step, arguments: Sequence[LiteralValue],
                  seconds: float | None = None) -> Evaluation:
    """Evaluate `step`, turning every failure into an `Evaluation` (runs in workers too);
    a loop still running after `seconds` stops it (`deadline.py`; None: no deadline).
    The intermediates' pages go back to the system as it ends (`return_freed_memory`), so
    the next evaluation, or the values a verdict keeps, do not stand on them."""
    try:
        return _evaluate_step(backend, step, arguments, seconds)
    finally:
        return_freed_memory()


def _evaluate_step(backend: StepEvaluator, step: Step, arguments: Sequence[LiteralValue],
                   seconds: float | None) -> Evaluation:
    from workbench.loader import ReadError
    from workbench.replay.errors import EvaluationError, Unsupported

    start = time.perf_counter()
    try:
        with evaluation_deadline(seconds):
            value = backend.evaluate(step, arguments)
    except Unsupported as error:
        return Evaluation("unsupported", reason=error.what, seconds=time.perf_counter() - start)
    except DidNotFinish as error:
        return Evaluation("did-not-finish", reason=str(error),
                          seconds=time.perf_counter() - start)
    except OverMemoryLimit as error:
        return Evaluation("error", reason=str(error), seconds=time.perf_counter() - start,
                          over_memory_limit=True)
    except (EvaluationError, ReadError) as error:
        return Evaluation("error", reason=str(error), seconds=time.perf_counter() - start)
    except (Exception, RecursionError) as error:  # an evaluator bug: report it, never crash
        reason = f"{type(error).__name__}: {error}"
        return Evaluation("error", reason=reason, seconds=time.perf_counter() - start)
    return Evaluation("value", value=value, seconds=time.perf_counter() - start)


def not_judged(comparison: Comparison) -> str:
    """Why a result beyond the bound is not called a mismatch: the noise inside the program,
    which may explain it, could not be modelled within the memory limit."""
    return (f"not judged: {comparison.mismatches} of {comparison.total} elements are beyond "
            "the rounding error bound without the noise inside the program, which the noise "
            f"stage could not model ({comparison.noise_problem})")


class Runner(Protocol):
    """Evaluates one step somewhere; raises `Cancelled` when `cancel` is set meanwhile."""

    def evaluate(self, backend: StepEvaluator, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None, seconds: float | None = None,
                 progress: Callable[[Any], None] | None = None) -> Evaluation:
        """`evaluate_step`'s result; `seconds` the time the step's loops have to finish;
        `progress` hears what the evaluation `report`s of how far it is
        (`processes/workers.py`)."""
        ...

    def entry_parameters(self, backend: Backend,
                         cancel: threading.Event | None) -> EntryParameters | None:
        """The entry's parameters, read where evaluations run: reading them parses the first
        step, which for a large module holds an interpreter for seconds."""

    def close(self) -> None: ...


class InlineRunner:
    """Evaluate in this process: no time limit; a cancel is noticed before the next step."""

    def evaluate(self, backend: StepEvaluator, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None, seconds: float | None = None,
                 progress: Callable[[Any], None] | None = None) -> Evaluation:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        with reporting(progress):
            return evaluate_step(backend, step, arguments, seconds)

    def entry_parameters(self, backend: Backend,
                         cancel: threading.Event | None) -> EntryParameters | None:
        return entry_parameters(backend)

    def close(self) -> None:
        pass


class ProcessRunner:
    """Evaluate in a worker process, killed when `time_limit` passes or `cancel` is set."""

    def __init__(self, time_limit: float | None = None, pool: WorkerPool | None = None) -> None:
        self.time_limit = time_limit
        self._own_pool = pool is None
        self.pool = pool if pool is not None else WorkerPool(1)

    def evaluate(self, backend: StepEvaluator, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None, seconds: float | None = None,
                 progress: Callable[[Any], None] | None = None) -> Evaluation:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        outcome = self.pool.call(evaluate_step, backend, step, list(arguments), seconds,
                                 time_limit=self.time_limit, cancel=cancel, progress=progress)
        if outcome.timed_out:
            return Evaluation("error", reason=f"time limit of {self.time_limit:g} s exceeded",
                              seconds=outcome.seconds)
        if outcome.error is not None:
            # A traceback's last line names the exception; a dead worker's message is one line.
            last = outcome.error.strip().splitlines()[-1]
            return Evaluation("error", reason=last, seconds=outcome.seconds)
        return outcome.value

    def entry_parameters(self, backend: Backend,
                         cancel: threading.Event | None) -> EntryParameters | None:
        """Read in the worker (whose loader cache then holds the module its first evaluation
        needs), so a UI's process never parses the module nor holds its interpreter."""
        outcome = self.pool.call(read_entry_parameters, backend, time_limit=self.time_limit,
                                 cancel=cancel)
        if outcome.timed_out:
            raise InputError(f"reading the entry parameters took longer than the time limit "
                             f"of {self.time_limit:g} s")
        if outcome.error is not None:
            raise InputError(outcome.error.strip().splitlines()[-1])
        parameters, problem = outcome.value
        if problem is not None:
            raise InputError(problem)
        return parameters

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()


def read_entry_parameters(backend: Backend) -> tuple[EntryParameters | None, str | None]:
    """`backend`'s entry parameters, or why they cannot be read (runs in workers)."""
    from workbench.loader import ReadError

    try:
        return entry_parameters(backend), None
    except ReadError as error:
        return None, str(error)


class ParallelEvaluations(Protocol):
    """Runs the independent evaluations of a verdict side by side (`parallel_verdict.py`: on
    this machine's worker processes or on a Dask cluster): the f64 truth with its perturbed
    twin, and the random-rounding samples. Each method returns None where it cannot (the
    replay then evaluates one at a time, as without it), and tells `started` what it runs
    and on how many workers, in units of about one evaluation of the reference's time."""

    workers: int

    def truths(self, replay: Replay, started: Callable[[str, float], None]
               ) -> tuple[Evaluation, Evaluation] | None:
        """The reference in f64 on the inputs and on the perturbed inputs, at once."""
        ...

    def noise(self, replay: Replay, arguments: list[LiteralValue],
              started: Callable[[str, float, float], None]) -> Evaluation | None:
        """The noise stage (`NoiseBackend`'s value) on widened `arguments`; None when it
        runs one at a time instead (having told `started` why, if it tried). `started` hears
        of each part as it starts: its label, units, and the units known to follow it."""
        ...

    def close(self) -> None: ...


def make_runner(time_limit: float | None = None, isolate: bool = False) -> Runner:
    """A worker-process runner when a time limit or isolation is wanted, else in-process."""
    if time_limit is not None or isolate:
        return ProcessRunner(time_limit)
    return InlineRunner()


@dataclass
class StepResult:
    """One step's verdict. `position` counts replayable steps (0 is the reference)."""

    position: int
    step: Step
    outcome: Outcome
    seconds: float = 0.0
    value: LiteralValue | None = None  # kept only when the replay keeps values

    @property
    def kind(self) -> Kind:
        return self.outcome.kind

    @property
    def status(self) -> str:
        """"ok", "mismatch", "unsupported: <what>", "error: <reason>" (the JSON status)."""
        return self.outcome.status

    @property
    def comparison(self) -> Comparison | None:
        """The comparison with the reference (None for the reference and failed steps)."""
        return self.outcome.comparison


# A step's loops have this many times the reference's evaluation time to finish, and at
# least `HANG_FLOOR_SECONDS`, before the step is judged not to finish (`deadline.py`): a
# miscompiled loop may never end. Optimized steps take about the reference's time.
HANG_FACTOR = 20.0
HANG_FLOOR_SECONDS = 10.0


@dataclass
class Replay:
    """The replay of one execution of one module, step by step, results cached.

    `atol`/`rtol` override the per-dtype default tolerances (and are then the only rule);
    `error_bound=False` judges by the tolerance alone too. With `keep_values` each result
    keeps its literal (to print it or dump it); otherwise only the reference is kept. A step
    whose loop still runs after `HANG_FACTOR` times the reference's time (at least
    `hang_floor` seconds; None: never) is a mismatch that did not finish. `on_phase` hears of
    each evaluation as it starts (`progress.py`), its time-left estimate planned for
    `planned_steps` step evaluations (a bisection's bound; by default every step).
    """

    backend: Backend
    inputs: ReplayInputs
    atol: float | None = None
    rtol: float | None = None
    runner: Runner = field(default_factory=InlineRunner)
    cancel: threading.Event | None = None
    keep_values: bool = False
    error_bound: bool = True
    noise: bool = True  # the bound's last stage: rounding noise inside the program
    hang_floor: float | None = HANG_FLOOR_SECONDS
    results: dict[int, StepResult] = field(default_factory=dict)
    recorded_comparison: Comparison | None = None
    # Set when the recording matches only the reference as the platform computes it (its
    # subnormals read and written as zero): what decided it, for the verdict to say.
    recorded_environment: str | None = None
    # Set when the recording is beyond the bound that the noise stage, refused for memory,
    # might have widened: why it is not judged (`not_judged`), rather than called a mismatch.
    recorded_not_judged: str | None = None
    evaluations: int = 0
    shadow_evaluations: int = 0
    noise_evaluations: int = 0  # random-rounding evaluations of the reference (SAMPLES each)
    shadow_seconds: float = 0.0
    on_phase: Callable[[ReplayPhase], None] | None = None
    planned_steps: int | None = None
    parallel: ParallelEvaluations | None = None  # the truths and the noise stage side by side

    def __post_init__(self) -> None:
        self.steps: list[Step] = self.backend.steps()
        self._reference_value: LiteralValue | None = None
        self._shadow: LiteralValue | None = None  # the reference in f64
        self._truths: dict[Stage, Truth] = {}
        self._shadow_problem: str | None = None
        self._noise_problem: str | None = None
        # The noise stage would not fit the memory limit: a result only it could explain is
        # then not judged (`_judge`), rather than called a mismatch.
        self._noise_over_memory = False
        self._normwise_outputs: Any = None  # made on first need (`_normwise`)
        # Comparisons by the digest of the result judged: a bisection's steps past a
        # miscompile often compute the same bits, and judging a model's step costs a minute.
        self._judged: dict[bytes, Comparison] = {}
        self._clock: PhaseClock | None = None
        # The perturbed twin of the truth, made beside it when evaluations run in parallel;
        # judged only if the conditioning is asked for.
        self._perturbed: Evaluation | None = None
        self._spill: bool | None = None  # decided by the reference's size (`spill.py`)
        self._shared: str | None = None  # a worker's files for this replay (`_shared_folder`)
        from workbench.replay import spill

        if spill.should_spill(spill.value_bytes(tuple(self.inputs.arguments))):
            self.inputs.arguments = list(spill.spilled(tuple(self.inputs.arguments)))

    def _kept(self, value: Any) -> Any:
        """`value` as the replay keeps it: on disk when the values a verdict keeps would
        crowd the memory limit (`spill.py`), else as it is."""
        from workbench.replay import spill

        if self._spill is None:
            self._spill = spill.should_spill(spill.value_bytes(value))
        return spill.spilled(value) if self._spill else value

    def _phase(self, what: str, units: float = 1.0, position: int | None = None,
               label: str = "", ahead: float = 0.0, replaces: bool = False) -> None:
        """Tell `on_phase` an evaluation of `units` (about one evaluation of the reference
        each) starts, with at least `ahead` units known to follow it (`replaces`: in place
        of the phase said last, which did not run as said)."""
        if self.on_phase is None:
            return
        if self._clock is None:
            judged = self.error_bound and self.atol is None and self.rtol is None
            planned = float(len(self.steps) if self.planned_steps is None
                            else self.planned_steps)
            workers = 1 if self.parallel is None else self.parallel.workers
            planned += (truth_units(workers) if judged else 0) + (
                noise_units(workers) if judged and self.noise else 0)
            self._clock = PhaseClock(planned)
        self.on_phase(self._clock.start(what, units, position, label, ahead, replaces))

    def close(self) -> None:
        self.runner.close()
        if self.parallel is not None:
            self.parallel.close()
        if self._shared is not None:
            shutil.rmtree(self._shared, ignore_errors=True)
            self._shared = None

    def _shared_folder(self) -> str:
        """A private folder for what a worker keeps on disk for this replay (`NoiseBackend`),
        made on first need and removed with the replay, whatever the worker left in it."""
        if self._shared is None:
            self._shared = tempfile.mkdtemp(prefix="workbench-replay-")
        return self._shared

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def reference(self) -> StepResult:
        """The first step's result (evaluated on first use), compared with the recording."""
        return self.evaluate(0)

    @property
    def reference_value(self) -> LiteralValue | None:
        self.reference  # noqa: B018 (evaluates on first use)
        return self._reference_value

    def evaluate(self, position: int) -> StepResult:
        """Evaluate the step at `position` (once) and judge it; raises `Cancelled`."""
        cached = self.results.get(position)
        if cached is not None:
            return cached
        if position != 0:
            reference = self.reference
            if reference.kind != Kind.OK:
                result = StepResult(position, self.steps[position], Outcome(
                    Kind.ERROR, "no reference: the first step is " + reference.status))
                self.results[position] = result
                return result
        step = self.steps[position]
        self._phase(REFERENCE if position == 0 else STEP, position=position, label=step.label)
        evaluation = self.runner.evaluate(self.backend, step, self.inputs.arguments, self.cancel,
                                          self._loop_seconds(position))
        self.evaluations += 1
        result = self._judge(position, step, evaluation)
        self.results[position] = result
        return result

    def _loop_seconds(self, position: int) -> float | None:
        """The time the step at `position` has to finish its loops (None: no deadline, for
        the reference, which the real run finished)."""
        reference = self.results.get(0)
        if position == 0 or self.hang_floor is None or reference is None:
            return None
        return max(self.hang_floor, HANG_FACTOR * reference.seconds)

    def _judge(self, position: int, step: Step, evaluation: Evaluation) -> StepResult:
        if evaluation.kind == "did-not-finish":
            reason = f"{evaluation.reason} (the reference took {self.results[0].seconds:.3g} s)"
            return StepResult(position, step, Outcome(Kind.MISMATCH, reason),
                              seconds=evaluation.seconds)
        if evaluation.kind != "value":
            return StepResult(position, step, Outcome(Kind(evaluation.kind), evaluation.reason),
                              seconds=evaluation.seconds)
        value = self._kept(evaluation.value)
        evaluation.value = None  # what the replay keeps is `value`
        assert value is not None
        if position == 0:
            self._reference_value = value
            if self.inputs.recorded is not None:
                # The reference is what the program should compute; the recording is what
                # the real run did: "expected" is the reference.
                self.recorded_comparison = self._judge_recorded(self.inputs.recorded)
                if not self.recorded_comparison.ok:
                    self._judge_recorded_as_the_platform_computes(self.inputs.recorded)
                recorded = self.recorded_comparison
                if not recorded.ok and recorded.noise_problem and self._noise_over_memory:
                    self.recorded_not_judged = not_judged(recorded)
            return StepResult(0, step, Outcome(Kind.OK), seconds=evaluation.seconds,
                              value=value)
        comparison = self.judge(value)
        if not comparison.ok and comparison.noise_problem and self._noise_over_memory:
            return StepResult(position, step, Outcome(Kind.ERROR, not_judged(comparison)),
                              evaluation.seconds)
        kind = Kind.OK if comparison.ok else Kind.MISMATCH
        return StepResult(position, step, Outcome(kind, comparison=comparison),
                          evaluation.seconds, value if self.keep_values else None)

    def judge(self, value: LiteralValue) -> Comparison:
        """Compare `value` with the reference: within the tolerance, or else within the
        rounding error bound of the truth. The truth is made on first need, in two stages:
        the reference in f64 first (the bound from the reference's own rounding), then, only
        when that bound is not enough, on perturbed inputs too (the conditioning). A result
        judged before (the same bits) gets the same comparison again."""
        reference = self._reference_value
        assert reference is not None
        key = digest(value)
        known = self._judged.get(key)
        if known is None:
            if not self.error_bound or self.atol is not None or self.rtol is not None:
                known = compare(reference, value, self.atol, self.rtol)  # the user's tolerance
            else:
                known = compare(reference, value, truth=self)
            self._judged[key] = known
        return copy.copy(known)  # the caller may add to it (`relations`)

    def _judge_recorded(self, recorded: LiteralValue) -> Comparison:
        """`_judge_recorded_elementwise`, and for a recording that still differs, its
        outputs made by a non-unique factorization (a Schur form, an eigen-decomposition)
        judged by the factorization's relations (`judge/factorizations.py`), the rest
        element by element. Steps are not judged this way: they run on the same LAPACK."""
        comparison = self._judge_recorded_elementwise(recorded)
        if comparison.ok or comparison.problem is not None:
            return comparison
        find = getattr(self.backend, "load", None)
        if find is None or self.atol is not None or self.rtol is not None:
            return comparison
        from workbench.loader import ReadError
        from workbench.replay.judge.factorization_outputs import factorizations
        from workbench.replay.judge.factorizations import judge_relations

        try:
            found = factorizations(find(self.steps[0]))
        except (Unsupported, EvaluationError, ReadError):
            return comparison
        reference = self._reference_value
        assert reference is not None
        replaced: Any = recorded
        texts, legal = [], True
        for factorization in found:
            try:
                relations = judge_relations(factorization, list(self.inputs.arguments),
                                            reference, recorded)
            except (ValueError, np.linalg.LinAlgError):
                continue
            if relations is None:
                continue
            texts.append(relations.text)
            legal = legal and relations.legal
            for path in relations.paths:
                replaced = _replace(replaced, path, _at(reference, path))
        if not texts:
            return comparison
        if legal:  # the other outputs, element by element
            comparison = self._judge_recorded_elementwise(replaced)
        comparison.relations = "; ".join(texts)
        return comparison

    def _judge_recorded_elementwise(self, recorded: LiteralValue) -> Comparison:
        """`judge`, and for a recording beyond the bound, again with the platform's legal
        dot/convolution roundings in the bound: a GPU's (TF32...), and on any platform what a
        dot's `algorithm=` allows."""
        from workbench.replay.judge.gpu_numerics import is_gpu_module

        comparison = self.judge(recorded)
        allowance = getattr(self.backend, "evaluate_gpu_allowance", None)
        if comparison.ok or allowance is None or comparison.bound is None:
            return comparison
        from workbench.replay.judge.error_bound import truth_of, widen

        truth = self.truth(conditioning=True)
        if truth is None or self._shadow is None or self._reference_value is None:
            return comparison
        try:
            # None (nothing to allow for) unless a GPU's or an `algorithm=` may round
            rounded = allowance(self.steps[0], [widen(a) for a in self.inputs.arguments],
                                is_gpu_module(self.backend.module))
        except (Unsupported, EvaluationError):
            return comparison
        if rounded is None:
            return comparison
        value, names = rounded
        try:
            gpu = truth_of(self._reference_value, self._shadow, value, self._normwise())
        except ValueError:
            return comparison
        verdict = compare(self._reference_value, recorded,
                          truth=Truth(truth.value, _larger(truth.bound, gpu.bound)))
        verdict.allowance = "/".join(sorted(names))
        return verdict


    def _judge_recorded_as_the_platform_computes(self, recorded: LiteralValue) -> None:
        """Judge the recording again, each element against the reference evaluated either
        way: as IEEE arithmetic does, or as the platform does (XLA CPU reads and writes
        subnormals as zero, `hlo.float_environment`). Both are legal; where that turns the
        comparison ok, `recorded_environment` says so. One more evaluation of the reference,
        only for a recording that differs, and only for a platform known to flush (or one
        the dump does not name)."""
        from workbench.replay.hlo.float_environment import PLATFORMS_THAT_FLUSH, either_way

        backend = self.backend
        if not isinstance(backend, EvaluatesFlushed):
            return
        platform = backend.platform()
        if platform is not None and platform not in PLATFORMS_THAT_FLUSH:
            return
        self._phase(FLUSHED)
        evaluation = self.runner.evaluate(FlushedBackend(backend), self.steps[0],
                                          self.inputs.arguments, self.cancel)
        if evaluation.kind != "value":
            return
        assert self._reference_value is not None
        mixed = either_way(self._reference_value, evaluation.value, recorded)
        if mixed is None:
            return
        expected, note = mixed
        comparison = compare(expected, recorded, truth=self)
        if comparison.ok:
            self.recorded_comparison = comparison
            self.recorded_environment = (
                f"{note}, as XLA {(platform or 'cpu').upper()} runs (denormals-are-zero, "
                "flush-to-zero)")

    def stages(self) -> tuple[Stage, ...]:
        """The bound's stages still worth trying: each contains the one before, so once the
        conditioning is known the first is not tried again; the noise stage comes last."""
        stages: tuple[Stage, ...] = (True,) if True in self._truths else (False, True)
        return (*stages, NOISE) if self.noise else stages

    @property
    def problem(self) -> str | None:
        """Why there is no truth (the comparison then judges by the tolerance alone), or no
        noise stage (the bound without it then stands)."""
        return self._shadow_problem or self._noise_problem

    def truth(self, conditioning: Stage = True) -> Truth | None:
        """The reference evaluated in f64 with its rounding error bound, with the
        conditioning term (a second evaluation, on perturbed inputs) or without, or with the
        rounding noise inside the program too (`NOISE`: random-rounding evaluations); each
        made once per replay. None when the backend cannot, with the reason kept.
        Raises `Cancelled`."""
        from workbench.replay.judge.error_bound import perturb, truth_of, widen, with_noise

        if self._shadow_problem is not None:
            return None
        if conditioning == NOISE:
            if NOISE not in self._truths:
                base = self.truth(True)
                if base is None or self._noise_problem is not None:
                    return None
                widens = getattr(self.backend, "shadow_widens_arguments", False)
                noise = self._evaluate_noise(list(self.inputs.arguments) if widens
                                             else [widen(a) for a in self.inputs.arguments])
                if noise is None:
                    return None
                assert self._reference_value is not None  # made with the base truth
                try:
                    # Each array kept (on disk, at model size) as it is made.
                    self._truths[NOISE] = with_noise(base, noise, self._reference_value,
                                                     self._kept)
                    del noise
                except ValueError as error:
                    self._noise_problem = str(error)
                    return None
            return self._truths[NOISE]
        widens = getattr(self.backend, "shadow_widens_arguments", False)
        if self._shadow is None:
            self._shadow = self._evaluate_truths()
            if self._shadow is not None:
                self._shadow = self._kept(self._shadow)
            if self._shadow is None:
                return None
        truth = self._truths.get(bool(conditioning))
        if truth is None:
            perturbed: LiteralValue | None = self._shadow
            if conditioning:  # the reference in f64 on perturbed inputs, kept only as a bound
                if self._perturbed is not None:  # made beside the truth
                    perturbed = self._shadow_value(self._perturbed)
                    self._perturbed = None
                else:
                    perturbed = self._evaluate_shadow(perturb(self.inputs.arguments, self._kept),
                                                      PERTURBED_TRUTH)
            if perturbed is None:
                return None
            assert self._reference_value is not None and perturbed is not None
            perturbed = self._kept(perturbed)
            try:
                truth = truth_of(self._reference_value, self._shadow, perturbed,
                                 self._normwise(), self._kept)
            except ValueError as error:
                self._shadow_problem = str(error)
                return None
            finally:
                del perturbed
                return_freed_memory()  # the bound's intermediates, as after an evaluation
            self._truths[bool(conditioning)] = truth
            if conditioning:
                self._truths.pop(False, None)  # never tried again (`stages`)
        return truth

    def _normwise(self) -> Any:
        """Which outputs a norm-wise accurate op makes (`error_bound.truth_of`); False for
        every output when the backend cannot tell."""
        if self._normwise_outputs is None:
            find = getattr(self.backend, "normwise_outputs", None)
            self._normwise_outputs = False if find is None else find(self.steps[0])
        return self._normwise_outputs

    def noise_stage_problem(self) -> str | None:
        """Why the noise stage, should a step need it, would not fit the memory limit, told
        before the replay starts where the inputs are large enough for that to matter (they
        are kept on disk: `spill.py`); None when it fits, or for a small step (whose stage
        says so, if it must, in a moment)."""
        from workbench.loader import ReadError
        from workbench.replay import spill
        from workbench.replay.judge.error_bound import widen

        find = getattr(self.backend, "noise_stage_problem", None)
        if not self.noise or not self.error_bound or find is None or \
                not spill.should_spill(spill.value_bytes(tuple(self.inputs.arguments))):
            return None
        widens = getattr(self.backend, "shadow_widens_arguments", False)
        try:
            return find(self.steps[0], list(self.inputs.arguments) if widens
                        else [widen(a) for a in self.inputs.arguments])
        except (Unsupported, EvaluationError, ReadError):
            return None  # the stage says so when it runs, if it must

    def _evaluate_noise(self, arguments: list[LiteralValue]) -> Any:
        if not hasattr(self.backend, "evaluate_noise"):
            self._noise_problem = f"the {self.backend.name} backend has no random rounding"
            return None
        evaluation = None
        said: list[str] = []  # what the parallel evaluations said of where the stage runs

        def started(label: str, units: float, ahead: float = 0.0) -> None:
            said.append(label)
            self._phase(NOISE_STAGE, units=units, label=label, ahead=ahead)

        if self.parallel is not None:
            evaluation = self.parallel.noise(self, arguments, started)
        if evaluation is None:  # one at a time (having said why, if it was asked to share)
            why = said[-1] if said else ""  # why one at a time, if the workers said
            if not said:  # the whole stage, until it says its first evaluation
                self._phase(NOISE_STAGE, units=noise_units(1))
            told = [False]

            def tell(message: Any) -> None:
                """Each evaluation of the stage, as it `report`s it: the phase said before
                the first did not run as said."""
                label, left = message
                self._phase(NOISE_STAGE, label=f"{why}: {label}" if why else label,
                            ahead=float(left), replaces=not told[0])
                told[0] = True

            # A worker's range on disk comes back as its file, from a folder this replay owns.
            backend = NoiseBackend(self.backend, None if isinstance(self.runner, InlineRunner)
                                   else self._shared_folder())
            evaluation = self.runner.evaluate(backend, self.steps[0], arguments, self.cancel,
                                              progress=tell)
        self.noise_evaluations += 1
        self.shadow_seconds += evaluation.seconds
        if evaluation.kind != "value":
            self._noise_problem = (f"the reference with random rounding is {evaluation.kind}: "
                                   f"{evaluation.reason}")
            self._noise_over_memory = evaluation.over_memory_limit
            return None
        return evaluation.value

    def _evaluate_truths(self) -> LiteralValue | None:
        """The truth: the reference in f64 on the inputs; with parallel evaluations, its
        perturbed twin beside it (kept for the conditioning, should it be asked for)."""
        from workbench.replay.judge.error_bound import widen

        if self.parallel is not None and hasattr(self.backend, "evaluate_shadow"):
            pair = self.parallel.truths(self, lambda label, units: self._phase(
                TRUTH, units=units, label=label))
            if pair is not None:
                self.shadow_evaluations += 2
                self.shadow_seconds += pair[0].seconds + pair[1].seconds
                self._perturbed = pair[1]
                return self._shadow_value(pair[0])
        widens = getattr(self.backend, "shadow_widens_arguments", False)
        return self._evaluate_shadow(list(self.inputs.arguments) if widens
                                     else [widen(a) for a in self.inputs.arguments])

    def _evaluate_shadow(self, arguments: list[LiteralValue],
                         what: str = TRUTH) -> LiteralValue | None:
        if not hasattr(self.backend, "evaluate_shadow"):
            self._shadow_problem = f"the {self.backend.name} backend has no f64 evaluation"
            return None
        self._phase(what)
        evaluation = self.runner.evaluate(ShadowBackend(self.backend), self.steps[0],
                                          arguments, self.cancel)
        self.shadow_evaluations += 1
        self.shadow_seconds += evaluation.seconds
        return self._shadow_value(evaluation)

    def _shadow_value(self, evaluation: Evaluation) -> LiteralValue | None:
        """An f64 evaluation's value, or None with the reason kept as the truth's problem."""
        if evaluation.kind != "value":
            self._shadow_problem = (f"the reference in f64 is {evaluation.kind}: "
                                    f"{evaluation.reason}")
            return None
        return evaluation.value

    def run(self, on_result: Callable[[StepResult], None] | None = None,
            stop_after_first_failure: bool = False) -> list[StepResult]:
        """Evaluate every step in order, streaming each result to `on_result`.

        With `stop_after_first_failure`, stop after the first step that is not `ok` (the
        reference failing to evaluate stops it too). Raises `Cancelled`.
        """
        results = []
        for position in range(len(self.steps)):
            result = self.evaluate(position)
            results.append(result)
            if on_result is not None:
                on_result(result)
            if position == 0 and result.kind != Kind.OK:
                break
            if stop_after_first_failure and result.kind != Kind.OK:
                break
        return results


def open_replay(root: Path, module: Module, execution: Execution | None = None,
                spec: InputSpec | None = None, *, backend: str | None = None,
                atol: float | None = None, rtol: float | None = None,
                runner: Runner | None = None, cancel: threading.Event | None = None,
                keep_values: bool = False) -> Replay:
    """A replay of `module` on `execution` (or on the inputs `spec` asks for).

    What a UI calls from a background thread, with a `ProcessRunner` and a cancel event;
    then `replay.run(...)` or `bisect_replay(replay, ...)` stream results back. Raises
    `NoBackend`, `InputError` or `ReadError` (each says what is wrong).
    """
    opened = open_backend(root, module, backend)
    runner = runner or InlineRunner()
    inputs = resolve_inputs(opened, execution, spec or InputSpec(),
                            lambda: runner.entry_parameters(opened, cancel))
    return Replay(opened, inputs, atol=atol, rtol=rtol, runner=runner, cancel=cancel,
                  keep_values=keep_values)


def _larger(a: Any, b: Any) -> Any:
    """The element-wise larger of two bound trees (None for integer arrays)."""
    if isinstance(a, tuple):
        return tuple(_larger(x, y) for x, y in zip(a, b, strict=True))
    return None if a is None else np.maximum(a, b)


def _at(value: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        value = value[index]
    return value


def _replace(value: Any, path: tuple[int, ...], part: Any) -> Any:
    """`value` with the output at tuple path `path` replaced by `part`."""
    if not path:
        return part
    items = list(value)
    items[path[0]] = _replace(items[path[0]], path[1:], part)
    return tuple(items)

"""Per-step replay of one execution: evaluate steps on the inputs, judge each against the
reference.

The reference is the result of the first replayable step; each later step is `ok` when its
result matches the reference within tolerance, `mismatch` when it does not, `unsupported:
<what>` when the evaluator cannot do it, `error: <reason>` when it fails otherwise. The
reference itself is compared with the execution's recorded result: a difference there means
the real run misbehaved (or the evaluator deviates from the compiler).

Where evaluation happens is a `Runner`'s business: `InlineRunner` evaluates in this process
(fastest; cancellation is seen between steps only), `ProcessRunner` in a worker process that
is killed at the time limit or on cancel, which is what a UI needs (see `workers.py`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.hlo_ir import LiteralValue
from workbench.model import Execution, Module, Step
from workbench.replay.backends import Backend, open_backend
from workbench.replay.compare import Comparison, compare
from workbench.replay.inputs import InputSpec, ReplayInputs, resolve_inputs
from workbench.replay.workers import Cancelled, WorkerPool

STATUS_KINDS = ("ok", "mismatch", "unsupported", "error")


@dataclass
class Evaluation:
    """How evaluating one step ended: a value, or `unsupported`/`error` with the reason."""

    kind: str  # "value", "unsupported", "error"
    value: LiteralValue | None = None
    reason: str = ""
    seconds: float = 0.0


def evaluate_step(backend: Backend, step: Step,
                  arguments: Sequence[LiteralValue]) -> Evaluation:
    """Evaluate `step`, turning every failure into an `Evaluation` (runs in workers too)."""
    from workbench.loader import ReadError
    from workbench.replay.errors import EvaluationError, Unsupported

    start = time.perf_counter()
    try:
        value = backend.evaluate(step, arguments)
    except Unsupported as error:
        return Evaluation("unsupported", reason=error.what, seconds=time.perf_counter() - start)
    except (EvaluationError, ReadError) as error:
        return Evaluation("error", reason=str(error), seconds=time.perf_counter() - start)
    except (Exception, RecursionError) as error:  # an evaluator bug: report it, never crash
        reason = f"{type(error).__name__}: {error}"
        return Evaluation("error", reason=reason, seconds=time.perf_counter() - start)
    return Evaluation("value", value=value, seconds=time.perf_counter() - start)


class Runner(Protocol):
    """Evaluates one step somewhere; raises `Cancelled` when `cancel` is set meanwhile."""

    def evaluate(self, backend: Backend, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None) -> Evaluation: ...

    def close(self) -> None: ...


class InlineRunner:
    """Evaluate in this process: no time limit; a cancel is noticed before the next step."""

    def evaluate(self, backend: Backend, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None) -> Evaluation:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        return evaluate_step(backend, step, arguments)

    def close(self) -> None:
        pass


class ProcessRunner:
    """Evaluate in a worker process, killed when `time_limit` passes or `cancel` is set."""

    def __init__(self, time_limit: float | None = None, pool: WorkerPool | None = None) -> None:
        self.time_limit = time_limit
        self._own_pool = pool is None
        self.pool = pool if pool is not None else WorkerPool(1)

    def evaluate(self, backend: Backend, step: Step, arguments: Sequence[LiteralValue],
                 cancel: threading.Event | None) -> Evaluation:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        outcome = self.pool.call(evaluate_step, backend, step, list(arguments),
                                 time_limit=self.time_limit, cancel=cancel)
        if outcome.timed_out:
            return Evaluation("error", reason=f"time limit of {self.time_limit:g} s exceeded",
                              seconds=outcome.seconds)
        if outcome.error is not None:
            # A traceback's last line names the exception; a dead worker's message is one line.
            last = outcome.error.strip().splitlines()[-1]
            return Evaluation("error", reason=last, seconds=outcome.seconds)
        return outcome.value

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()


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
    status: str  # "ok", "mismatch", "unsupported: <what>", "error: <reason>"
    comparison: Comparison | None = None  # against the reference
    seconds: float = 0.0
    value: LiteralValue | None = None  # kept only when the replay keeps values

    @property
    def kind(self) -> str:
        """The status without its reason: one of STATUS_KINDS."""
        return self.status.split(":", 1)[0]

    def to_json(self) -> dict[str, Any]:
        step = self.step
        return {
            "position": self.position,
            "index": step.index,
            "pass": step.pass_name,
            "xla_step": step.xla_step,
            "file": step.file,
            "status": self.status,
            "seconds": round(self.seconds, 6),
            "comparison": None if self.comparison is None else self.comparison.to_json(),
        }


@dataclass
class Replay:
    """The replay of one execution of one module, step by step, results cached.

    `atol`/`rtol` override the per-dtype default tolerances. With `keep_values` each result
    keeps its literal (to print it or dump it); otherwise only the reference is kept.
    """

    backend: Backend
    inputs: ReplayInputs
    atol: float | None = None
    rtol: float | None = None
    runner: Runner = field(default_factory=InlineRunner)
    cancel: threading.Event | None = None
    keep_values: bool = False
    results: dict[int, StepResult] = field(default_factory=dict)
    recorded_comparison: Comparison | None = None
    evaluations: int = 0

    def __post_init__(self) -> None:
        self.steps: list[Step] = self.backend.steps()
        self._reference_value: LiteralValue | None = None

    def close(self) -> None:
        self.runner.close()

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
            if reference.kind != "ok":
                result = StepResult(position, self.steps[position],
                                    "error: no reference: the first step is "
                                    + reference.status)
                self.results[position] = result
                return result
        step = self.steps[position]
        evaluation = self.runner.evaluate(self.backend, step, self.inputs.arguments, self.cancel)
        self.evaluations += 1
        result = self._judge(position, step, evaluation)
        self.results[position] = result
        return result

    def _judge(self, position: int, step: Step, evaluation: Evaluation) -> StepResult:
        if evaluation.kind != "value":
            return StepResult(position, step, f"{evaluation.kind}: {evaluation.reason}",
                              seconds=evaluation.seconds)
        value = evaluation.value
        assert value is not None
        if position == 0:
            self._reference_value = value
            if self.inputs.recorded is not None:
                # The reference is what the program should compute; the recording is what
                # the real run did: "expected" is the reference.
                self.recorded_comparison = compare(value, self.inputs.recorded, self.atol,
                                                   self.rtol)
            return StepResult(0, step, "ok", seconds=evaluation.seconds, value=value)
        comparison = compare(self._reference_value, value, self.atol, self.rtol)
        return StepResult(position, step, "ok" if comparison.ok else "mismatch", comparison,
                          evaluation.seconds, value if self.keep_values else None)

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
            if position == 0 and result.kind != "ok":
                break
            if stop_after_first_failure and result.kind != "ok":
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
    inputs = resolve_inputs(opened, execution, spec or InputSpec())
    return Replay(opened, inputs, atol=atol, rtol=rtol, runner=runner or InlineRunner(),
                  cancel=cancel, keep_values=keep_values)

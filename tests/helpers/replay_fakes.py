"""A scripted backend for testing the replay machinery without an evaluator.

Each step's behaviour is its pass name: "good" (computes the reference's result), "bad" (a
different result), "unsupported", "error", "raise" (an evaluator bug), "sleep" (runs for an
hour: a run that ends was stopped), "nap" (a good step that takes half a second), "crash" (the
process dies); other pass names behave as "good". An execution with a negative number
(`snapshot.-1`) recorded a wrong result; reading `snapshot.-2` raises. It is picklable and
opened by import path, so worker processes can run it too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.helpers.patience import FOREVER
from workbench.model import Execution, Module, Source, Step
from workbench.replay.errors import EvaluationError, Unsupported


def make_module(behaviours: str, key: str = "module_0001",
                executions: tuple[str, ...] = ("snapshot.1",)) -> Module:
    module = Module(id=key, name="jit_fake", format="xla", key=key)
    for index, word in enumerate(behaviours.split()):
        module.steps.append(Step(index=index, pass_name=word, ir="hlo", kind="pass",
                                 xla_step=index, text=Source(f"{key}.{index:04d}.txt")))
    for execution in executions:
        module.executions.append(Execution(id=execution, file=f"{key}.{execution}.pb"))
    return module


BEHAVIOURS = ("good", "bad", "unsupported", "error", "raise", "sleep", "nap", "crash")


def reference_function(x: np.ndarray) -> np.ndarray:
    return (x * 2).astype(np.float32)


@dataclass
class FakeBackend:
    root: Path
    module: Module
    name: str = "fake"

    def steps(self) -> list[Step]:
        return list(self.module.steps)

    def parameter_specs(self) -> list:
        return [(np.dtype(np.float32), (4,))]

    def non_negative_parameters(self) -> frozenset[int]:
        return frozenset()

    def recorded(self, execution: Execution) -> tuple[list, np.ndarray | None]:
        if execution.id == "snapshot.-2":
            raise RuntimeError("a bug in the backend")
        x = np.arange(4, dtype=np.float32)
        offset = np.float32(0.5 if execution.id.startswith("snapshot.-") else 0.0)
        return [x], reference_function(x) + offset

    def evaluate(self, step: Step, arguments: Sequence[np.ndarray]) -> np.ndarray:
        behaviour = step.pass_name if step.pass_name in BEHAVIOURS else "good"
        x = arguments[0]
        if behaviour == "good":
            return reference_function(x)
        if behaviour == "bad":
            return reference_function(x) + np.float32(1)
        if behaviour == "unsupported":
            raise Unsupported("frobnicate")
        if behaviour == "error":
            raise EvaluationError("operand 1 has the wrong shape")
        if behaviour == "raise":
            raise ZeroDivisionError("division by zero")
        if behaviour == "sleep":
            time.sleep(FOREVER)
        if behaviour == "nap":
            time.sleep(0.5)
            return reference_function(x)
        if behaviour == "crash":
            os._exit(3)
        raise AssertionError(behaviour)


def open_fake_backend(root: Path, module: Module) -> FakeBackend | None:
    return FakeBackend(root, module) if module.steps else None


# The backend's import path, for `open_backend`.
FAKE = "tests.helpers.replay_fakes:open_fake_backend"


def counting_to(count: int) -> int:
    """Says 1 to `count` as it goes (`workers.report`), then returns `count`: a call that
    tells how far it is, run in a worker or here."""
    from workbench.replay.processes.workers import report

    for done in range(1, count + 1):
        report(done)
    return count

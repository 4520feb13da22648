"""The cost of judging by a rounding error bound against judging by a fixed tolerance.

    python benchmarks/verdict_bench.py [--dump DIR | --layers 4] [--module KEY] [--repeat 3]

On the largest module of the large transformer dump (made or reused as `replay_large.py`
does; `--dump` for another), first execution, each case is bisected with the fixed tolerance
alone (`Replay(error_bound=False)`, the old judgment) and with the default judgment, in the
same run, alternating, CPU time of this process (a shared machine's load does not count),
best of `--repeat`; the ratio is new / old (the goal: at most 2x):

- clean: every step and the recording within the tolerance, so no shadow is made;
- culprit: every float result of the steps from the middle on scaled by 1 + 1e-3 (the
  evaluations are real, the bug planted in their results), so the bisection needs the bound
  at every judgment and makes both shadow evaluations;
- recording only: the recorded result scaled the same way and no step broken: two step
  evaluations against two shadow evaluations.

A result beyond both stages of the bound (the culprit and recording-only cases) also costs the
noise stage: `SAMPLES` random-rounding evaluations of the reference in f64, once per replay
(`workbench/replay/judge/noise/`); a clean execution never reaches it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_large import add_module_arguments, module_of

from workbench.hlo_ir import LiteralValue
from workbench.model import Step
from workbench.replay.backends import Backend, open_backend
from workbench.replay.bisect import Verdict, bisect_replay
from workbench.replay.inputs import InputSpec, ReplayInputs, resolve_inputs
from workbench.replay.steps import Replay

SCALE = 1 + 1e-3  # beyond the f32 tolerance (rtol 1e-4) and far beyond rounding


def scaled(value: LiteralValue) -> LiteralValue:
    if isinstance(value, tuple):
        return tuple(scaled(part) for part in value)
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return array
    return (array * array.dtype.type(SCALE)).astype(array.dtype)


@dataclass
class Planted:
    """A backend whose results from step `first_bad` on are scaled: a planted culprit."""

    inner: Backend
    first_bad: int

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def steps(self) -> list[Step]:
        return self.inner.steps()

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        value = self.inner.evaluate(step, arguments)
        return scaled(value) if self.steps().index(step) >= self.first_bad else value

    def evaluate_shadow(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        return self.inner.evaluate_shadow(step, arguments)  # type: ignore[attr-defined]  # the wrapped backend is an HLO backend


def bisect(backend: Backend, inputs: ReplayInputs, error_bound: bool,
           noise: bool = True) -> tuple[Verdict, Replay]:
    replay = Replay(backend, inputs, error_bound=error_bound, noise=noise)
    return bisect_replay(replay), replay


def cpu_seconds(backend: Backend, inputs: ReplayInputs, error_bound: bool,
                noise: bool = True) -> float:
    start = time.process_time()
    bisect(backend, inputs, error_bound, noise)
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_module_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder, dump, module = module_of(args, "verdict_bench")
    backend = open_backend(dump.root, module)
    inputs = resolve_inputs(backend, module.executions[0], InputSpec())
    steps = len(backend.steps())
    print(f"{folder}: {module.key} ({module.name}), {steps} steps, execution "
          f"{module.executions[0].id}")
    assert inputs.recorded is not None
    cases = {
        "clean": (backend, inputs),
        "culprit": (Planted(backend, steps // 2), inputs),
        "recording only": (backend, replace(inputs, recorded=scaled(inputs.recorded))),
    }
    bisect(backend, inputs, False)  # load every step once: the cache is warm for both
    worst = 0.0
    for name, (subject, case_inputs) in cases.items():
        old_verdict, old_replay = bisect(subject, case_inputs, False)
        new_verdict, new_replay = bisect(subject, case_inputs, True)
        _, quiet_replay = bisect(subject, case_inputs, True, noise=False)
        old = new = quiet = float("inf")
        for _ in range(args.repeat):
            old = min(old, cpu_seconds(subject, case_inputs, False))
            new = min(new, cpu_seconds(subject, case_inputs, True))
            quiet = min(quiet, cpu_seconds(subject, case_inputs, True, noise=False))
        worst = max(worst, new / old)
        culprit = (new_verdict.culprit.step.pass_name if new_verdict.culprit is not None
                   else "-")
        print(f"{name:>15}: CPU time with the fixed tolerance {old:.3f} s "
              f"({old_replay.evaluations} evaluations, {old_verdict.status}), error bound "
              f"{new:.3f} s ({new_replay.evaluations} evaluations + "
              f"{new_replay.shadow_evaluations} in f64 + {new_replay.noise_evaluations} "
              f"random-rounding, {new_verdict.status}, "
              f"culprit {culprit}): {new / old:.2f}x; against the bound without the noise "
              f"stage ({quiet:.3f} s, {quiet_replay.noise_evaluations} random-rounding): "
              f"{new / quiet:.2f}x")
    print(f"worst ratio {worst:.2f}x (goal: at most 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

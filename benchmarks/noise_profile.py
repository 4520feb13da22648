"""Where the random-rounding samples' time goes at model size: CPU seconds of the noise
stage's first samples of a step's reference, and the functions that take it, against another
checkout measured in the same run.

    python benchmarks/noise_profile.py DUMP MODULE [--baseline CHECKOUT] [--samples 2]
                                       [--memory-limit 14G] [--top 8]

Each checkout runs in a child process of its own (`PYTHONPATH`), on `--fake-data` arguments
(seed 0), with one BLAS thread as the command line runs: it plans the stage for the module's
first step (the reference), then evaluates `--samples` random-rounding samples of the stage's
first group, as the stage does (sample 0 estimates the narrow dots' accumulation spreads, the
later ones may reuse them), under `cProfile`. CPU time (user + system of the process), not
wall time: a shared machine's load counts far less. `--memory-limit` must let the stage's plan
fit (a GPT-2-size step needs about 14G); the samples themselves hold one evaluation and the
range of the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(dump: str, module_key: str, samples: int, top: int) -> None:
    """Run the samples in this process; print one JSON line: each sample's CPU seconds and
    the functions with the most CPU of their own."""
    from workbench.blas_threads import one_blas_thread_unless_set

    one_blas_thread_unless_set()
    import cProfile
    import inspect
    import pstats
    import time

    from workbench.index import scan
    from workbench.replay.backends import HloBackend, open_backend
    from workbench.replay.hlo import evaluate_module
    from workbench.replay.inputs import fake_inputs
    from workbench.replay.judge.noise.noisy_interpreter import NoisyInterpreter
    from workbench.replay.judge.noise.recorder import Recorder
    from workbench.replay.judge.noise.result_range import ResultRange
    from workbench.replay.judge.noise.run import noise_plan

    found = scan(Path(dump))
    module = next(m for m in found.modules if m.key == module_key)
    backend = open_backend(found.root, module)
    assert isinstance(backend, HloBackend), "the noise stage evaluates HLO"
    step = backend.steps()[0]
    specs = backend.parameter_specs()
    assert specs is not None, "the module's parameters cannot be read"
    arguments = fake_inputs(specs)
    plan = noise_plan(backend.load(step), arguments)
    recorder = Recorder(needed=plan.groups[0], needed_bytes=plan.budget)
    result = ResultRange(plan.result)
    extra = {}
    if "spreads_budget" in inspect.signature(NoisyInterpreter).parameters:  # as the stage
        extra["spreads_budget"] = plan.spreads
    interpreter = NoisyInterpreter(plan.shadow, plan.declared, recorder, result.add_output,
                                   **extra)
    profile = cProfile.Profile()
    seconds = []
    for sample in range(samples):
        interpreter.reseed(sample)
        start = time.process_time()
        profile.enable()
        value = evaluate_module(plan.shadow, arguments, interpreter=interpreter)
        result.add(value)
        profile.disable()
        del value
        seconds.append(time.process_time() - start)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]  # pstats keeps its table untyped
    own = sorted(((total, f"{Path(file).name}:{name}") for (file, _, name), (_, _, total, _, _)
                  in stats.items()), reverse=True)[:top]
    print(json.dumps({"groups": len(plan.groups), "seconds": seconds,
                      "functions": [[name, total] for total, name in own]}))


def measure(checkout: Path, arguments: argparse.Namespace) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(checkout),
                   "WORKBENCH_MEMORY_LIMIT": arguments.memory_limit}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                           arguments.dump, arguments.module, "--samples", str(arguments.samples),
                           "--top", str(arguments.top)], env=environment, cwd=checkout,
                          capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{checkout}: the samples printed nothing\n{done.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("module")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--memory-limit", default="14G")
    parser.add_argument("--top", type=int, default=8, help="functions listed per checkout")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments.dump, arguments.module, arguments.samples, arguments.top)
        return 0
    checkouts = {"this checkout": HERE.parent}
    if arguments.baseline is not None:
        checkouts["baseline"] = arguments.baseline.resolve()
    results = {name: measure(path, arguments) for name, path in checkouts.items()}
    load = os.getloadavg()[0]
    print(f"{arguments.samples} random-rounding samples of {arguments.module}'s reference "
          f"({arguments.dump}, --fake-data, --memory-limit {arguments.memory_limit}): CPU "
          f"seconds; load average {load:.1f} on {os.cpu_count()} cores")
    names = list(results)
    print(f"  {'':28s}" + "".join(f"{name:>16s}" for name in names)
          + ("    ratio" if len(names) == 2 else ""))
    for sample in range(arguments.samples):
        row = [results[name]["seconds"][sample] for name in names]
        ratio = f"{row[0] / row[1]:8.2f}x" if len(row) == 2 and row[1] else ""
        print(f"  {f'sample {sample}':28s}" + "".join(f"{v:16.2f}" for v in row) + ratio)
    for name in names:
        print(f"  {name} ({results[name]['groups']} group(s) in the plan), most CPU of their "
              "own, all samples:")
        for function, seconds in results[name]["functions"]:
            print(f"    {function:60s} {seconds:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

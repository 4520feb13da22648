"""The pages of an evaluation's freed intermediates go back to the system when it ends, so a
verdict's later evaluations and the values it keeps do not stand on them (glibc keeps freed
heap chunks resident: its mmap threshold rises to the largest array freed, up to 32 MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.replay_fakes import FakeBackend, make_module
from workbench.replay import steps
from workbench.replay.inputs import InputSpec, resolve_inputs
from workbench.replay.processes import memory

ROOT = Path(__file__).resolve().parents[2]

# Frees 60 arrays of 4 MB from the heap (the last one kept, so the heap's top stays in use and
# glibc trims nothing by itself), then prints the resident memory before and after the call.
FRAGMENTED = """
import os
import numpy as np
from workbench.replay.processes.memory import return_freed_memory

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

first = np.ones(16 * 2**20 // 8)  # mmapped; freeing it raises the threshold to 16 MB
del first
arrays = [np.ones(4 * 2**20 // 8) for _ in range(60)]
kept = arrays.pop()
arrays.clear()
before = resident()
returned = return_freed_memory()
print(before, resident(), returned)
"""


@pytest.mark.skipif(memory._malloc_trim() is None,
                    reason="the C library has no malloc_trim (not glibc)")
def test_freed_heap_pages_go_back_to_the_system() -> None:
    done = subprocess.run([sys.executable, "-c", FRAGMENTED], cwd=ROOT, check=True,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    before, after, returned = done.stdout.split()
    assert returned == "True"
    # 236 MB freed in the heap: most of it leaves the resident set.
    assert int(before) - int(after) > 150 * 2**20, done.stdout


def test_every_evaluation_ends_by_returning_freed_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(steps, "return_freed_memory", lambda: calls.append("trim") or True)
    backend = FakeBackend(Path("/nonexistent"), make_module("good raise",
                                                            executions=("snapshot.1",)))
    inputs = resolve_inputs(backend, backend.module.executions[0], InputSpec())
    evaluated = steps.evaluate_step(backend, backend.steps()[0], inputs.arguments)
    failed = steps.evaluate_step(backend, backend.steps()[1], inputs.arguments)
    assert (evaluated.kind, failed.kind) == ("value", "error")
    assert calls == ["trim", "trim"]  # after a value and after a failure alike


def test_the_noisy_truth_shares_the_truths_array_where_the_noise_decides_nothing() -> None:
    """The truth is the largest array a verdict keeps (f64, the result's size): the noise
    stage keeps it once, not a copy beside it, unless the samples decide some element."""
    import numpy as np

    from workbench.replay.judge.compare import Truth
    from workbench.replay.judge.error_bound import with_noise
    from workbench.replay.judge.noise.model import Noise

    value = np.array([1.0, -2.0, 3.0, 0.5])
    truth = Truth(value, np.full(4, 1e-6))
    noise = Noise(value - 1e-3, value + 2e-3)
    widened = with_noise(truth, noise, value.astype(np.float32))
    assert widened.value is value
    np.testing.assert_allclose(widened.bound, 1e-6 + 4.0 * 2e-3)
    # Where the truth is not finite but every sample is, the samples' middle stands for it.
    undecided = np.array([np.nan, 1.0])
    decided = with_noise(Truth(undecided, np.zeros(2)), Noise(np.array([0.0, 1.0]),
                                                               np.array([2.0, 1.0])),
                         np.array([np.nan, 1.0], np.float32))
    assert decided.value is not undecided
    np.testing.assert_array_equal(decided.value, [1.0, 1.0])


# f32[1000,1000] values: one evaluation in f64 holds 8 MB an array; each value's range 17 MB.
WIDE = """HloModule wide

ENTRY main {
  x = f32[1000,1000] parameter(0)
  y = f32[1000,1000] parameter(1)
  s = f32[1000,1000] add(x, y)
  p = f32[1000,1000] multiply(s, x)
  ROOT d = f32[1000,1000] divide(p, y)
}
"""


def test_a_noise_stage_over_the_limit_says_what_it_needs_before_any_sample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.hlo.shadow import widened_module
    from workbench.replay.judge.noise import run

    module = parse_hlo_text(WIDE)
    arguments = [np.full((1000, 1000), 1.5), np.full((1000, 1000), 2.5)]
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, str(48 * 2**20))
    # One f64 evaluation fits the limit (its values, 40 MB at most at once)...
    assert Interpreter(widened_module(module)).holds_at_once("main") < 48 * 2**20

    def no_samples(*_: object) -> None:
        raise AssertionError("a sample ran")

    monkeypatch.setattr(run, "_sampled", no_samples)
    # ... the stage, with the samples' ranges beside it, does not: said before any sample.
    with pytest.raises(memory.OverMemoryLimit) as raised:
        run.noise_of(module, arguments)
    message = str(raised.value)
    assert "limit 48 MB" in message and "random-rounding stage" in message
    assert "raise it with --memory-limit" in message
    needed = float(message.split("needs ")[1].split(" MB")[0])
    assert 48 < needed < 200  # evaluation + result ranges + the values' ranges, not the caps
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, str(2**30))
    with pytest.raises(AssertionError, match="a sample ran"):  # within the limit: it runs
        run.noise_of(module, arguments)

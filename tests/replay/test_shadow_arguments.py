"""The f64 truth widens each float argument where it is read, not all of them up front.

A GPT-2-size training step's f32 parameters and optimizer state are 1.9 GB; widened up front
they were 3.9 GB more, held through the whole evaluation of the truth. The shadow now keeps
the entry's float parameters in their declared types and gives each instruction reading one
its own f64 copy: the values must be bit for bit those of the eager widening, and the
evaluation must hold far less. The perturbed truth's inputs (not representable in the
declared types) are made one argument at a time, each handed to the replay's keeper (to disk
when the replay spills).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from tests.helpers.noise_dump import recorded_adamw_step
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import narrow_parameters, shadow_module, widened_module
from workbench.replay.judge.error_bound import perturb, widen
from workbench.replay.steps import ShadowBackend, open_replay

NOISE = Path(__file__).resolve().parents[1] / "data" / "noise"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def test_the_truth_from_narrow_arguments_is_the_eagerly_widened_one_bit_for_bit() -> None:
    backend, arguments = recorded_adamw_step()
    step = backend.steps()[0]
    module = backend.load(step)
    assert narrow_parameters(module)  # f32 parameters and bf16-free state: kept narrow
    eager = evaluate_module(widened_module(module), [widen(a) for a in arguments])
    assert _same(backend.evaluate_shadow(step, arguments), eager)


def test_the_perturbed_inputs_are_handed_to_the_keeper_one_by_one() -> None:
    arguments = [np.linspace(-3, 3, 50, dtype=np.float32), np.arange(6, dtype=np.int32),
                 np.linspace(1, 2, 40).astype(ml_dtypes.bfloat16)]
    kept: list[Any] = []

    def keep(value: Any) -> Any:
        kept.append(value)
        return value

    made = perturb(arguments, keep)
    assert [id(v) for v in kept] == [id(v) for v in made]
    assert _same(tuple(made), tuple(perturb(arguments)))
    assert made[0].dtype == np.float64 and made[1].dtype == np.int32


def test_the_replay_hands_the_truth_its_arguments_unwidened() -> None:
    dump = scan(NOISE / "gpt_adamw_mini")
    module = next(m for m in dump.modules if m.key == "module_0022")
    replay = open_replay(dump.root, module, module.executions[0])
    seen: list[tuple[Any, list[Any]]] = []
    runner = replay.runner
    original = runner.evaluate

    def spy(backend: Any, step: Any, arguments: Any, cancel: Any, seconds: Any = None,
            **more: Any) -> Any:
        seen.append((backend, list(arguments)))
        return original(backend, step, arguments, cancel, seconds, **more)

    runner.evaluate = spy  # type: ignore[method-assign]  # a test's stand-in for the method
    replay.evaluate(0)
    assert replay.truth(True) is not None
    reference = seen[0][1]
    truth = next(arguments for backend, arguments in seen if type(backend) is ShadowBackend)
    assert [a.dtype for a in truth] == [a.dtype for a in reference]
    assert any(a.dtype == np.float32 for a in truth)


MANY_USES = """HloModule many_uses

ENTRY main {
  a = f32[500000] parameter(0)
  b = f32[500000] parameter(1)
  c = f32[500000] parameter(2)
  d = f32[500000] parameter(3)
  ab = f32[500000] add(a, b)
  abc = f32[500000] multiply(ab, c)
  abcd = f32[500000] subtract(abc, d)
  e = f32[500000] add(abcd, a)
  f = f32[500000] multiply(e, b)
  g = f32[500000] add(f, c)
  ROOT h = f32[500000] subtract(g, d)
}
"""


def _traced_peak(call: Any) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_no_widened_copy_of_every_argument_is_held() -> None:
    module = parse_hlo_text(MANY_USES)
    arguments = [np.full(500_000, k + 1.5, dtype=np.float32) for k in range(4)]
    wide_bytes = 500_000 * 8
    narrow = narrow_parameters(module)
    assert narrow == frozenset(range(4))
    eager = _traced_peak(lambda: evaluate_module(shadow_module(module),
                                                 [widen(a) for a in arguments]))
    lazy = _traced_peak(lambda: evaluate_module(shadow_module(module, narrow), arguments))
    # Eagerly: four widened arguments and the values made from them; lazily: at most the two
    # copies one instruction reads, beside the values made.
    assert eager - lazy >= 2 * wide_bytes, (eager, lazy)
    assert _same(evaluate_module(shadow_module(module, narrow), arguments),
                 evaluate_module(shadow_module(module), [widen(a) for a in arguments]))


def test_widening_keeps_what_is_already_wide_and_copies_only_what_it_widens() -> None:
    wide = np.arange(6, dtype=np.float64)
    complex_wide = np.ones(3, dtype=np.complex128)
    counts = np.arange(4, dtype=np.int32)
    narrow = np.arange(5, dtype=ml_dtypes.bfloat16)
    widened = widen((wide, (complex_wide, counts), narrow))
    assert widened[0] is wide and widened[1][0] is complex_wide and widened[1][1] is counts
    assert widened[2].dtype == np.float64 and np.array_equal(widened[2], np.arange(5.0))
    assert widen(np.ones(2, dtype=np.complex64)).dtype == np.complex128

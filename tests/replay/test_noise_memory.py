"""The noise stage's memory: arguments widened where they are read, and the split sample's
budget counting only the ranges the recorder keeps (rounding ops' results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.judge.error_bound import widen
from workbench.replay.judge.noise.budget import TRACKED_BYTES, needed_clusters, packed_groups
from workbench.replay.judge.noise.run import noise_of
from workbench.replay.judge.noise.split_sample import non_negative, steep_ancestors

NOISE = Path(__file__).resolve().parents[1] / "data" / "noise"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def test_the_noise_stage_on_unwidened_arguments_is_the_widened_one() -> None:
    dump = scan(NOISE / "gpt_adamw_mini")
    module = next(m for m in dump.modules if m.key == "module_0022")
    backend = open_backend(dump.root, module)
    assert isinstance(backend, HloBackend)
    arguments, _ = backend.recorded(module.executions[0])
    hlo = backend.load(backend.steps()[0])
    wide = noise_of(hlo, [widen(a) for a in arguments])
    narrow = noise_of(hlo, arguments)
    assert _same(narrow.low, wide.low) and _same(narrow.high, wide.high)
    assert _same(narrow.nan_seen, wide.nan_seen)
    assert narrow.discontinuities == wide.discontinuities


TWO_COMPARES = """HloModule two_compares

ENTRY main {
  p = f32[1000] parameter(0)
  q = f32[1000] parameter(1)
  a = f32[1000] add(p, q)
  n = f32[1000] negate(p)
  c = pred[1000] compare(a, n), direction=GT
  b = f32[1000] multiply(p, q)
  m = f32[1000] negate(q)
  d = pred[1000] compare(b, m), direction=LT
  ROOT t = (pred[1000], pred[1000]) tuple(c, d)
}
"""


def test_the_split_samples_budget_counts_only_what_the_recorder_keeps() -> None:
    module = parse_hlo_text(TWO_COMPARES)
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    clusters = needed_clusters(declared, steep_ancestors(declared, non_negative(module)))
    assert len(clusters) == 2  # each compare with its operands
    # Each cluster keeps the range of one rounding op (17 bytes an element: add, multiply);
    # `negate` only moves its operand and keeps none. Both fit together:
    budget = TRACKED_BYTES + 2 * 17 * 1000
    assert len(packed_groups(clusters, declared, budget)) == 1
    assert len(packed_groups(clusters, declared, budget - 1)) == 2

"""The noise stage's memory: arguments widened where they are read."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.helpers.noise_dump import recorded_adamw_step
from workbench.replay.judge.error_bound import widen
from workbench.replay.judge.noise.run import noise_of


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def test_the_noise_stage_on_unwidened_arguments_is_the_widened_one() -> None:
    backend, arguments = recorded_adamw_step()
    hlo = backend.load(backend.steps()[0])
    wide = noise_of(hlo, [widen(a) for a in arguments])
    narrow = noise_of(hlo, arguments)
    assert _same(narrow.low, wide.low) and _same(narrow.high, wide.high)
    assert _same(narrow.nan_seen, wide.nan_seen)
    assert narrow.discontinuities == wide.discontinuities

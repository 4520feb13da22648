"""Per-device interpreters kept between evaluations of a partitioned step (`INTERPRETERS`):
the same step evaluated again reuses them and gives the same result; another module, device
count or floating-point environment gets its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.hlo.partitioned import INTERPRETERS, InterpreterPool, run_devices

STEP = (
    Path(__file__).resolve().parents[2]
    / "data"
    / "sharded"
    / "shard_map_collectives"
    / "module_0000.jit_body.cpu_after_optimizations.txt"
)


def _module():
    return parse_hlo_text(STEP.read_text(), str(STEP))


def _arguments(module) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(0)
    shapes = [p.shape.dims for p in module.entry.parameters]
    per_device = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return [per_device for _ in range(8)]


def test_a_step_evaluated_again_reuses_its_interpreters() -> None:
    module = _module()
    arguments = _arguments(module)
    INTERPRETERS.clear()
    first = run_devices(module, arguments, 8, 1)
    lent = INTERPRETERS.take(module, 8, False)
    assert all(i.module is module and i.device is None for i in lent)
    assert all(i._plans for i in lent)  # compiled by the first run
    INTERPRETERS.give_back(module, lent)
    second = run_devices(module, arguments, 8, 1)
    again = INTERPRETERS.take(module, 8, False)
    assert [id(i) for i in again] == [id(i) for i in lent]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_other_modules_and_settings_get_their_own() -> None:
    pool = InterpreterPool(modules=2)
    module, other = _module(), _module()
    lent = pool.take(module, 8, False)
    pool.give_back(module, lent)
    assert pool.take(other, 8, False)[0] is not lent[0]
    assert pool.take(module, 8, True)[0] is not lent[0]
    assert pool.take(module, 4, False)[0] is not lent[0]
    assert pool.take(module, 8, False)[0] is lent[0]
    assert pool.take(module, 8, False)[0] is not lent[0]  # lent to one run at a time
    given = {}
    for kept in (module, other, _module()):  # the oldest of three is let go
        given[id(kept)] = pool.take(kept, 8, False)
        pool.give_back(kept, given[id(kept)])
    assert pool.take(other, 8, False) is given[id(other)]
    assert pool.take(module, 8, False) is not given[id(module)]

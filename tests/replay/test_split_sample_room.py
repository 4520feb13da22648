"""What the split sample keeps at model size: only the values it moves itself, the ranges that
tell where a steep op is decided in f32 rounded outward, and its clusters packed largest
first (`split_sample.steep_ancestors`, `budget.deciders`, `budget.packed_groups`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import Instruction
from workbench.replay.judge.noise import budget, result_range
from workbench.replay.judge.noise.model import SAMPLES, Noise
from workbench.replay.judge.noise.run import NoisePlan, noise_from, noise_of, noise_plan, sampled
from workbench.replay.judge.noise.split_sample import non_negative, steep_ancestors

# AdamW's first update of a bf16 gradient g = x * y - b that nearly cancels at element 0,
# scaled by a positive constant (`scaled`: a product whose sign is g's) and by a factor made
# from the step count (`corrected`: 1 - 0.9^t, a difference the program may round to any
# sign, broadcast), before the steep divide g / (|g| + eps).
UPDATE = """HloModule scaled_update

ENTRY main {
  x = bf16[4] parameter(0)
  y = bf16[4] parameter(1)
  b = bf16[4] parameter(2)
  t = f32[] parameter(3)
  a = bf16[4] multiply(x, y)
  g = bf16[4] subtract(a, b)
  m = f32[4] convert(g)
  half = f32[] constant(0.5)
  halves = f32[4] broadcast(half), dimensions={}
  scaled = f32[4] multiply(m, halves)
  one = f32[] constant(1)
  decay = f32[] constant(0.9)
  decayed = f32[] power(decay, t)
  bias = f32[] subtract(one, decayed)
  biases = f32[4] broadcast(bias), dimensions={}
  corrected = f32[4] divide(scaled, biases)
  magnitude = f32[4] abs(corrected)
  eps = f32[] constant(1e-8)
  epsilons = f32[4] broadcast(eps), dimensions={}
  denominator = f32[4] add(magnitude, epsilons)
  ROOT update = f32[4] divide(corrected, denominator)
}
"""
ARGUMENTS = [np.array([1.0 + 2**-6, 1.0, 2.0, -3.0]), np.ones(4),
             np.array([1.0, 0.5, 1.0, 3.0]), np.array(1.0)]


def _declared(text: str) -> dict[tuple[str, str], Instruction]:
    module = parse_hlo_text(text)
    return {(c.name, i.name): i for c in module.computations for i in c.instructions}


def test_a_value_whose_sign_is_its_operands_is_moved_where_they_are() -> None:
    """The sum g is a candidate; m (g widened) and `scaled` (m by a positive constant) cross
    zero only where g does, so they are not: the split sample moves g, and they follow it.
    `corrected` divides by a broadcast difference that no candidate covers, so it stays one.
    The update still lands on both sides at element 0, and only there."""
    module = parse_hlo_text(UPDATE)
    declared = _declared(UPDATE)
    ancestors = steep_ancestors(declared, non_negative(module, ARGUMENTS))
    names = {name for (_, name) in ancestors}
    assert {"g", "corrected"} <= names
    assert not {"m", "scaled"} & names
    found = noise_of(module, ARGUMENTS)
    assert found.low[0] < -0.9 and found.high[0] == pytest.approx(1.0, abs=1e-4)
    assert np.all(found.high[1:] - found.low[1:] < 1e-6)
    assert [(d.name, d.elements) for d in found.discontinuities if d.flipped] == [("update", 1)]


@pytest.mark.parametrize("block", [result_range.BLOCK, 3])
def test_a_deciders_range_is_kept_in_f32_around_every_sample(
        block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The update is read only to tell where it is decided: its range is kept in f32, each
    end the nearest f32 outside the f64 range the samples make, at 9 bytes an element rather
    than 17, a block at a time as whole; the noise it leads to is the same."""
    monkeypatch.setattr(result_range, "BLOCK", block)
    module = parse_hlo_text(UPDATE)
    plan = noise_plan(module, ARGUMENTS)
    update = ("main", "update")
    assert update in plan.deciders and ("main", "g") not in plan.deciders
    assert budget.group_bytes({update}, plan.declared, plan.deciders) == 4 * budget.DECIDER_BYTES
    wide = dataclasses.replace(plan, deciders=frozenset())
    narrow_part = sampled(plan, ARGUMENTS, 0, range(SAMPLES))
    wide_part = sampled(wide, ARGUMENTS, 0, range(SAMPLES))
    key = ("main", "update", 0)
    (low, high), (wide_low, wide_high) = narrow_part.ranges[key], wide_part.ranges[key]
    assert low.dtype == high.dtype == np.float32 and wide_low.dtype == np.float64
    assert np.all(low <= wide_low) and np.all(high >= wide_high)
    up, down = np.float32(np.inf), np.float32(-np.inf)
    assert np.all(np.nextafter(low, up) > wide_low) and np.all(np.nextafter(high, down) < wide_high)
    assert narrow_part.ranges[("main", "g", 0)][0].dtype == np.float64
    narrow_noise, wide_noise = noise_of(module, ARGUMENTS), _noise_with(wide, ARGUMENTS)
    np.testing.assert_array_equal(narrow_noise.low, wide_noise.low)
    np.testing.assert_array_equal(narrow_noise.high, wide_noise.high)
    assert narrow_noise.discontinuities == wide_noise.discontinuities


def _noise_with(plan: NoisePlan, arguments: list[np.ndarray]) -> Noise:
    """The stage on `plan`, as `noise_of` runs it on its own."""
    return noise_from(plan, arguments, (sampled(plan, arguments, group, range(SAMPLES))
                                        for group in range(len(plan.groups))))


def test_clusters_pack_largest_first_into_fewer_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clusters of 3, 2, 2 and 1 units with room for 4: in program order they would take three
    groups (3 | 2 2 | 1); largest first, two (3 1 | 2 2), each group's clusters listed in
    program order, the groups in that of their first."""
    text = ("HloModule four\n\nENTRY main {\n"
            + "".join(f"  p{i} = f32[{n}000] parameter({i})\n  s{n}{i} = f32[{n}000] "
                      f"add(p{i}, p{i})\n" for i, n in enumerate((3, 2, 2, 1)))
            + "  ROOT r = f32[3000] parameter(4)\n}\n")
    declared = _declared(text)
    clusters = [{("main", f"s{n}{i}")} for i, n in enumerate((3, 2, 2, 1))]
    monkeypatch.setattr(budget, "TRACKED_BYTES", 0)
    unit = 1000 * budget.RANGE_BYTES
    groups = budget.packed_groups(clusters, declared, 4 * unit)
    assert groups == [{("main", "s30"), ("main", "s13")}, {("main", "s21"), ("main", "s22")}]
    assert budget.packed_groups(clusters, declared, 8 * unit) == [set().union(*clusters)]
    assert budget.packed_groups(clusters, declared, 3 * unit) == [
        {("main", "s30")}, {("main", "s21"), ("main", "s13")}, {("main", "s22")}]

"""A value is judged against the truth of its region: the instructions making it from the last
values both steps made bit for bit alike, evaluated in f64 on those values. Rounding before
them is common to both steps and explains no difference between them. And what the later step
makes bit for bit as the earlier did is not evaluated again (`StepPair.settled`)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import localize_cases as cases
from workbench.formats.hlo_text import parse_hlo_text
from workbench.model import Step
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import widened_module
from workbench.replay.judge.error_bound import widen
from workbench.replay.localize import regions
from workbench.replay.localize.localizer import Localizer
from workbench.replay.localize.match import Key, flatten
from workbench.replay.localize.regions import region_module

# An entry value read by a fusion, whose result an entry instruction reads.
CROSSING = cases.FUSION_HEADER + """%fused_computation (param_0: f32[2,3], param_1: f32[3]) -> f32[2,3] {
  %param_0 = f32[2,3]{1,0} parameter(0)
  %param_1 = f32[3]{0} parameter(1)
  %b = f32[2,3]{1,0} broadcast(%param_1), dimensions={1}
  ROOT %m = f32[2,3]{1,0} multiply(%param_0, %b)
}

ENTRY %main (x: f32[2,3], y: f32[3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[3]{0} parameter(1)
  %e = f32[2,3]{1,0} exponential(%x)
  %f = f32[2,3]{1,0} fusion(%e, %y), kind=kLoop, calls=%fused_computation
  ROOT %s = f32[2,3]{1,0} subtract(%f, %x)
}
"""  # noqa: E501

ENTRY: tuple = ()


def _region(text: str, root: Key, cut: set[Key]) -> tuple[object, list[Key]] | None:
    module = parse_hlo_text(text)
    sites, alias = flatten(module)
    return region_module(module, sites, alias, root, cut.__contains__)


def test_a_region_crosses_into_and_out_of_fusions() -> None:
    module = parse_hlo_text(CROSSING)
    made = _region(CROSSING, (ENTRY, "s"), {(ENTRY, "x"), (ENTRY, "y")})
    assert made is not None
    region, starts = made
    assert starts == [(ENTRY, "x"), (ENTRY, "y")]
    names = [i.name for i in region.entry.instructions]  # type: ignore[attr-defined]  # the region's module has an entry
    assert names == ["x", "y", "e", "b", "m", "s"]  # the fusion's body, not the fusion
    x, y = cases.FUSION_ARGS
    value = evaluate_module(widened_module(region), [widen(x), widen(y)])  # type: ignore[arg-type]  # the widened arrays are literal values
    wide_x, wide_y = x.astype(np.float64), y.astype(np.float64)
    assert value.dtype == np.float64
    np.testing.assert_allclose(value, np.exp(wide_x) * wide_y - wide_x, rtol=1e-12)
    assert module.entry.by_name["f"].opcode == "fusion"  # the module itself is unchanged


def test_a_region_starts_where_values_are_cut() -> None:
    made = _region(CROSSING, (ENTRY, "s"), {(ENTRY, "e"), (ENTRY, "x"), (ENTRY, "y")})
    assert made is not None
    region, starts = made
    assert starts == [(ENTRY, "e"), (ENTRY, "y"), (ENTRY, "x")]  # as the walk meets them
    assert [i.opcode for i in region.entry.instructions] == [  # type: ignore[attr-defined]  # the region's module has an entry
        "parameter", "parameter", "parameter", "broadcast", "multiply", "subtract"]


def test_no_region_past_a_value_not_made_there_or_too_many_instructions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Not cut at the entry parameters: the region would have to start before the step does.
    assert _region(CROSSING, (ENTRY, "s"), set()) is None
    # A loop's result is made by many evaluations of its body: no region goes past it.
    loop = parse_hlo_text(cases.LOOP_BEFORE)
    root = (ENTRY, loop.entry.root_name)
    assert loop.entry.root.opcode == "get-tuple-element"
    assert _region(cases.LOOP_BEFORE, root, {(ENTRY, "x")}) is None
    monkeypatch.setattr(regions, "REGION_LIMIT", 2)
    assert _region(CROSSING, (ENTRY, "s"), {(ENTRY, "x"), (ENTRY, "y")}) is None


def test_a_departure_on_identical_operands_is_judged_on_the_instruction_alone() -> None:
    """maximum became minimum on operands both steps made alike: the truth is the earlier
    instruction in f64 on those operands, and no step is evaluated in f64 (two
    evaluations: the steps themselves)."""
    step = Step(0, "p", "hlo", "after-pass")
    x, y = cases.ENTRY_ARGS
    result = Localizer(parse_hlo_text(cases.ENTRY_BEFORE), parse_hlo_text(cases.ENTRY_AFTER),
                       cases.ENTRY_ARGS).run(step, step)
    assert result.instruction is not None and result.instruction.name == "e.2"
    assert result.evaluations == 2
    truth = np.maximum((x * y).astype(np.float64), x.astype(np.float64))  # m is f32 in both
    assert result.elements
    for element in result.elements:
        assert element.truth == truth[element.index]


def test_a_fusion_computing_what_the_earlier_step_did_is_not_evaluated() -> None:
    step = Step(0, "p", "hlo", "after-pass")
    before, after = parse_hlo_text(cases.FUSED_BEFORE), parse_hlo_text(cases.FUSED_AFTER)
    localizer = Localizer(before, after, cases.FUSION_ARGS)
    settled = localizer.pair.settled()
    assert settled[(ENTRY, "f")] == (((), "m"), ())  # its result is the earlier m
    part = localizer.pair.unsettled().entry
    assert [(i.name, i.opcode) for i in part.instructions] == [
        ("x", "parameter"), ("y", "parameter"), ("f", "constant"), ("t.1", "abs")]
    assert part.by_name["f"].literal_elided  # a placeholder: its value is given
    result = localizer.run(step, step)
    assert result.instruction is not None and result.instruction.name == "t.1"
    assert result.elements
    for element in result.elements:  # exp(x) * y is positive: the signs alone differ
        assert element.before < 0 and element.after == -element.before

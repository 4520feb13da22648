"""A value no result depends on (a loop's tuple element nothing reads, an instruction a pass
left dead) may change across a pass as it likes: it is never named the culprit."""

from __future__ import annotations

from tests.helpers import localize_cases as cases
from workbench.formats.hlo_text import parse_hlo_text
from workbench.model import Step
from workbench.replay.localize.localizer import Localizer
from workbench.replay.localize.result import Localization


def _localize(before: str, after: str) -> Localization:
    step = Step(0, "p", "hlo", "after-pass")
    return Localizer(parse_hlo_text(before), parse_hlo_text(after),
                     cases.LOOP_ARGS).run(step, step)


def test_a_loop_element_nothing_reads_does_not_make_the_loop_depart() -> None:
    result = _localize(cases.COUNTED_BEFORE, cases.COUNTED_AFTER)
    assert result.instruction is None, result.summary
    assert result.outputs is not None and result.outputs.ok
    assert "no departure to localize" in result.explanation


def test_a_read_element_still_makes_it_depart() -> None:
    # The counter read by the result: the same change is a departure of the loop (the copy
    # in its body has no counterpart, so the loop is the first value that departs while its
    # operand agrees).
    read = cases.COUNTED.replace("tuple(%v.state, %i.out)", "tuple(%v.state, %c.out)")
    result = _localize(read.replace("COUNT", "add(%c.1, %one)"),
                       read.replace("COUNT", "copy(%c.1)"))
    assert result.instruction is not None and result.instruction.name == "w"
    assert result.comparison is not None and result.comparison.first_element == (1,)


def test_a_dead_instruction_that_departs_is_not_the_culprit() -> None:
    before = cases.ENTRY_BEFORE.replace(
        "  ROOT %r", "  %dead = f32[4]{0} multiply(%m, %y)\n  ROOT %r")
    after = cases.ENTRY_BEFORE.replace(
        "  ROOT %r", "  %dead = f32[4]{0} divide(%m, %y)\n  ROOT %r")
    result = Localizer(parse_hlo_text(before), parse_hlo_text(after),
                       cases.ENTRY_ARGS).run(Step(0, "p", "hlo", "after-pass"),
                                             Step(1, "q", "hlo", "after-pass"))
    assert result.instruction is None, result.summary
    assert result.outputs is not None and result.outputs.ok

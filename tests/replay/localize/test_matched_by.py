"""The culprit report says how the culprit was matched to its counterpart, and lists the
rewrites of the same pass that were judged legal."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.helpers import localize_cases as cases
from workbench.formats.hlo_text import parse_hlo_text
from workbench.model import Step
from workbench.replay.localize.localizer import Localizer
from workbench.replay.localize.match import (
    BY_NAME,
    BY_OP_NAME,
    OPCODE_CHANGED,
    STRUCTURE,
    match_modules,
)
from workbench.replay.localize.result import Localization
from workbench.replay.localize.text import localization_lines

HEADER = "HloModule t, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}\n\n"
BEFORE = (
    HEADER
    + """ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %s = f32[4]{0} sqrt(%y), metadata={op_name="jit(f)/sqrt"}
  %d = f32[4]{0} divide(%x, %s), metadata={op_name="jit(f)/div"}
  %e = f32[4]{0} exponential(%x), metadata={op_name="jit(f)/exp"}
  ROOT %r = f32[4]{0} add(%d, %e), metadata={op_name="jit(f)/add"}
}
"""
)
# One pass: x / sqrt(y) -> x * rsqrt(y) (legal), and exponential -> exponential-minus-one.
AFTER = (
    HEADER
    + """ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %s = f32[4]{0} rsqrt(%y), metadata={op_name="jit(f)/sqrt"}
  %d = f32[4]{0} multiply(%x, %s), metadata={op_name="jit(f)/div"}
  %e = f32[4]{0} exponential-minus-one(%x), metadata={op_name="jit(f)/exp"}
  ROOT %r = f32[4]{0} add(%d, %e), metadata={op_name="jit(f)/add"}
}
"""
)
ARGS = [np.array([1, 2, 0.5, -1], np.float32), np.array([3, 0.7, 2, 5], np.float32)]


def _run(before: str, after: str, arguments: list[np.ndarray]) -> Localization:
    step = Step(0, "p", "hlo", "after-pass")
    return Localizer(parse_hlo_text(before), parse_hlo_text(after), arguments).run(step, step)


def test_bug_among_legal_rewrites_is_named_with_the_rewrites_listed() -> None:
    result = _run(BEFORE, AFTER, ARGS)
    assert result.instruction is not None
    assert (result.instruction.name, result.instruction.opcode) == ("e", "exponential-minus-one")
    assert result.matched_by == OPCODE_CHANGED
    assert [text.split(" ")[0] for text in result.legal_rewrites] == ["d", "s"]
    assert "d (multiply) <- d (divide)" in result.legal_rewrites[0]
    lines = localization_lines(result)
    assert f"  matched to e by {OPCODE_CHANGED}" in lines
    assert "2 rewrite(s) judged legal" in "\n".join(lines)


def test_a_culprit_matched_by_structure_says_so() -> None:
    result = _run(cases.REDUCE_BEFORE, cases.REDUCE_AFTER, cases.REDUCE_ARGS)
    assert result.instruction is not None
    assert result.matched_by == STRUCTURE
    assert result.legal_rewrites == []


def test_a_value_whose_operand_was_rewritten_is_matched_by_name_then_op_name() -> None:
    """y * 2 -> y + y leaves `s` without a counterpart; `d` (the same name) and `d.9` (renamed,
    the same op_name) are then matched by those, and the report's words say so."""
    before = BEFORE.replace("sqrt(%y)", "multiply(%y, %y)")
    after = before.replace("multiply(%y, %y)", "add(%y, %x)")
    renamed = after.replace("%d = ", "%d.9 = ").replace("add(%d, %e)", "add(%d.9, %e)")
    for text, name, how in ((after, "d", BY_NAME), (renamed, "d.9", BY_OP_NAME)):
        matching = match_modules(parse_hlo_text(before), parse_hlo_text(text))
        assert matching.counterpart[((), name)] == ((), "d")
        assert matching.matched_by(((), name)) == how
        assert ((), "s") not in matching.counterpart
        assert matching.matched_by(((), "x")) == "the same parameter"


def test_json_says_how_the_culprit_was_matched() -> None:
    from workbench.output.json_shapes import localization_json

    data = localization_json(_run(BEFORE, AFTER, ARGS))
    assert data["matched_by"] == OPCODE_CHANGED
    assert len(data["legal_rewrites"]) == 2


CAUSAL = Path(__file__).parents[2] / "data" / "lowp" / "causal_attention_f32"


def _algsimp_pair(root: Path) -> Localization:
    """Localize the real dump's algsimp step (XLA step 0007) against the step before it."""
    from workbench.index import scan
    from workbench.replay.localize.localizer import localize_steps
    from workbench.replay.steps import open_replay

    module = next(m for m in scan(root).modules if m.executions)
    with open_replay(root, module, module.executions[0]) as replay:
        steps, arguments = replay.steps, replay.inputs.arguments
    (after,) = [s for s in steps if s.xla_step == 7]
    return localize_steps(root, steps[steps.index(after) - 1], after, arguments)


def test_a_bug_in_a_busy_pass_is_named_past_values_whose_operands_were_rewritten(
        tmp_path: Path) -> None:
    """Causal attention (real XLA CPU, JAX 0.12): algsimp makes `s / 3` a multiply by its
    reciprocal, `select(p, true, false)` p, `broadcast(iota)` a wider iota, and drops
    `max(x, -inf)`. `select_n.2` (the masked scores) then reads two operands with no
    counterpart and differs from before in the last bit; it was called departing without
    being compared, so localization gave up. With `exp -> expm1` planted in the same step,
    the exp is named and the masked scores are among the rewrites judged legal."""
    from tests.helpers.planting import plant

    clean = _algsimp_pair(CAUSAL)
    assert clean.instruction is None
    assert "there is no departure to localize" in clean.explanation
    planted = tmp_path / "planted"
    assert plant(CAUSAL, planted, "module_0002", 7, "exponential", "exponential-minus-one")
    result = _algsimp_pair(planted)
    assert result.instruction is not None, result.explanation
    assert (result.instruction.name, result.instruction.opcode) == (
        "exp.1", "exponential-minus-one")
    assert any(text.startswith("select_n.2 (select) <-") for text in result.legal_rewrites)
    assert result.instruction.op_name == "jit(attention)/exp"

"""Localization: planted bugs (outside and inside fusions, in loop bodies, in a reducer) are
named at the planted instruction; a departure no single instruction explains says so."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import localize_cases as cases
from tests.helpers.localize_dumps import write_dump
from workbench.cli import main
from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import Instruction
from workbench.index import scan
from workbench.model import Step
from workbench.replay.bisect import bisect_replay
from workbench.replay.hlo import evaluate_module
from workbench.replay.localize.culprit import localize_verdict
from workbench.replay.localize.localizer import Localizer
from workbench.replay.localize.regions import cone_module
from workbench.replay.localize.result import LocalizeError
from workbench.replay.steps import open_replay


def _localize(tmp_path: Path, before: str, after: str, arguments: list[np.ndarray]):
    root = write_dump(tmp_path / "dump", before, after, arguments)
    dump = scan(root)
    module = dump.modules[0]
    with open_replay(root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay)
        assert verdict.culprit is not None, verdict.detail
        return localize_verdict(replay, verdict)


@pytest.mark.parametrize(("before", "after", "arguments", "name", "opcode", "computation",
                          "source"), [
    (cases.ENTRY_BEFORE, cases.ENTRY_AFTER, cases.ENTRY_ARGS, "e.2", "minimum", "main.1",
     "f.py:4"),
    (cases.FUSION_BEFORE, cases.FUSION_AFTER, cases.FUSION_ARGS, "m.1", "divide",
     "fused_computation", "f.py:7"),
    (cases.LOOP_BEFORE, cases.LOOP_AFTER, cases.LOOP_ARGS, "v.3", "cosine", "body",
     "f.py:10"),
    (cases.REDUCE_BEFORE, cases.REDUCE_AFTER, cases.REDUCE_ARGS, "s", "reduce", "main",
     "f.py:12"),
], ids=["entry", "fusion", "loop", "reducer"])
def test_planted_instruction_is_named(tmp_path: Path, before: str, after: str,
                                      arguments: list[np.ndarray], name: str, opcode: str,
                                      computation: str, source: str) -> None:
    result = _localize(tmp_path, before, after, arguments)
    assert result.instruction is not None, result.explanation
    assert (result.instruction.name, result.instruction.opcode,
            result.instruction.computation, result.instruction.source) == (
        name, opcode, computation, source)
    assert result.comparison is not None and not result.comparison.ok
    assert result.elements and all(e.before != e.after for e in result.elements)
    assert name in result.instruction.text
    assert any(line.lstrip().startswith(("%" + name, "ROOT %" + name))
               for line in result.instruction.neighbours)


def test_fusion_counterpart_is_the_unfused_instruction(tmp_path: Path) -> None:
    result = _localize(tmp_path, cases.FUSION_BEFORE, cases.FUSION_AFTER, cases.FUSION_ARGS)
    assert result.counterpart is not None
    assert (result.counterpart.name, result.counterpart.opcode) == ("m", "multiply")
    assert result.instruction is not None
    assert result.instruction.context == "fused_computation called by f"


def test_loop_departure_is_named_in_its_first_iteration(tmp_path: Path) -> None:
    result = _localize(tmp_path, cases.LOOP_BEFORE, cases.LOOP_AFTER, cases.LOOP_ARGS)
    assert result.instruction is not None
    assert result.instruction.context.endswith("iteration 0")


def test_loop_departure_that_starts_in_a_later_iteration(tmp_path: Path) -> None:
    """GE -> GT differs only when the counter is 2: named in iteration 2, not before."""
    result = _localize(tmp_path, cases.LATE_LOOP_BEFORE, cases.LATE_LOOP_AFTER,
                       cases.LATE_LOOP_ARGS)
    assert result.instruction is not None, result.explanation
    assert (result.instruction.name, result.instruction.opcode,
            result.instruction.source) == ("late", "compare", "f.py:14")
    assert result.instruction.context.endswith("iteration 2")
    assert result.elements[0].before is True and result.elements[0].after is False


def test_no_single_culprit_says_so(tmp_path: Path) -> None:
    result = _localize(tmp_path, cases.UNMATCHED_BEFORE, cases.UNMATCHED_AFTER,
                       cases.ENTRY_ARGS)
    assert result.instruction is None
    assert "no single instruction explains it" in result.explanation
    assert "main/n" in result.explanation  # the value with no counterpart


def test_identical_steps_have_no_culprit() -> None:
    module = parse_hlo_text(cases.LOOP_BEFORE)
    step = Step(0, "p", "hlo", "after-pass")
    result = Localizer(module, parse_hlo_text(cases.LOOP_BEFORE), cases.LOOP_ARGS).run(step,
                                                                                       step)
    assert result.instruction is None and result.departing == 0
    assert "there is no departure to localize" in result.explanation
    assert result.outputs is not None and result.outputs.ok
    assert result.evaluations == 2  # nothing beyond the tolerance: no shadow evaluation


def test_memory_limit_is_a_clear_error() -> None:
    step = Step(0, "p", "hlo", "after-pass")
    localizer = Localizer(parse_hlo_text(cases.FUSION_BEFORE), parse_hlo_text(cases.FUSION_AFTER),
                          cases.FUSION_ARGS, memory_limit=16)
    with pytest.raises(LocalizeError, match="exceed"):
        localizer.run(step, step)


def test_the_limit_is_the_memory_limit_and_counts_what_the_evaluations_hold(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No fixed cap: by default the limit in force (`--memory-limit` sets it), and the values
    kept in memory plus what the evaluations under way hold at once fit in it: beyond it the
    earlier step's values are spilled to a temporary folder, removed afterwards, and the same
    culprit is found with the same numbers."""
    import tempfile

    from workbench.replay.processes import memory

    step = Step(0, "p", "hlo", "after-pass")
    before, after = parse_hlo_text(cases.FUSION_BEFORE), parse_hlo_text(cases.FUSION_AFTER)
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, "8G")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    localizer = Localizer(before, after, cases.FUSION_ARGS)
    assert localizer.memory_limit == 8 << 30
    found = localizer.run(step, step)
    assert found.instruction is not None and found.spilled_bytes == 0
    holds, kept = localizer.evaluations_hold, localizer.peak
    assert holds > 0 and kept > 0
    just_enough = Localizer(before, after, cases.FUSION_ARGS, memory_limit=holds + kept)
    assert just_enough.run(step, step).spilled_bytes == 0
    short = Localizer(before, after, cases.FUSION_ARGS, memory_limit=holds + kept - 1)
    spilled = short.run(step, step)
    assert spilled.spilled_bytes > 0 and short.peak + short.evaluations_hold <= holds + kept - 1
    assert spilled.instruction == found.instruction and spilled.elements == found.elements
    assert spilled.comparison is not None and found.comparison is not None
    assert spilled.comparison.max_abs_error == found.comparison.max_abs_error
    assert not list(tmp_path.iterdir())  # the spill folder is gone
    again = short.run(step, step)  # as triage runs the same pair once per execution
    assert again.spilled_bytes == spilled.spilled_bytes and again.elements == found.elements
    assert not list(tmp_path.iterdir())


def test_observer_sees_fusion_and_loop_values_and_changes_nothing() -> None:
    seen: list[tuple[int, str]] = []

    class Watch:
        depth = 0

        def enter(self, computation: object) -> None:
            self.depth += 1

        def before(self, instruction: Instruction) -> None:
            pass

        def value(self, instruction: Instruction, value: object) -> None:
            seen.append((self.depth, instruction.name))

        def leave(self) -> None:
            self.depth -= 1

    module = parse_hlo_text(cases.LOOP_BEFORE)
    plain = evaluate_module(module, cases.LOOP_ARGS)
    observed = evaluate_module(module, cases.LOOP_ARGS, Watch())
    np.testing.assert_array_equal(plain, observed)
    assert seen.count((2, "v.3")) == 4  # the body ran four times
    assert (1, "out") in seen


def test_cli_localize_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.FUSION_BEFORE, cases.FUSION_AFTER,
                      cases.FUSION_ARGS)
    assert main(["localize", str(root), "t", "0000", "0001", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["instruction"]["name"] == "m.1"
    assert payload["instruction"]["op_name"] == "jit(f)/mul"
    assert payload["instruction"]["max_abs_error"] > payload["instruction"]["bound"]
    assert payload["before_instruction"]["name"] == "m"
    assert payload["elements"]


def test_cli_localize_rejects_steps_out_of_order(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.FUSION_BEFORE, cases.FUSION_AFTER,
                      cases.FUSION_ARGS)
    assert main(["localize", str(root), "t", "0001", "0000"]) == 2
    assert "must come before" in capsys.readouterr().err


LOWP = Path(__file__).parents[2] / "data" / "lowp"


@pytest.mark.parametrize("name", ["attention_bf16", "conv_bn_f16", "cumsum_bf16",
                                  "activations_bf16_f32_out"])
def test_no_wolf_on_real_low_precision_pipelines(name: str) -> None:
    """Every pass of these real XLA pipelines keeps the result (the verdicts agree): no pair
    of consecutive steps may name a culprit instruction, and each says the results agree
    (float normalization and layout rewrites change intermediate types and shapes)."""
    from workbench.replay.localize.localizer import localize_steps

    root = LOWP / name
    module = next(m for m in scan(root).modules if m.executions)
    with open_replay(root, module, module.executions[0]) as replay:
        steps, arguments = replay.steps, replay.inputs.arguments
    for before, after in itertools.pairwise(steps):
        result = localize_steps(root, before, after, arguments)
        assert result.instruction is None, (after.index, result.summary)
        assert "there is no departure to localize" in result.explanation, (after.index,
                                                                           result.explanation)


CORPUS_XLA = Path(__file__).parents[2] / "data" / "corpus" / "xla"


@pytest.mark.parametrize("name", ["fori_loop", "mlp"])
def test_no_wolf_where_a_pass_simplifies_loops(name: str) -> None:
    """Every module of these real JAX dumps keeps its result at every pass; among them XLA's
    simplify-while-loops, which leaves loop counters nothing reads changed (in `fori_loop`
    and the `jax.random` loops of `mlp`): no pair of consecutive steps names a culprit."""
    from workbench.replay.localize.localizer import localize_steps

    root = CORPUS_XLA / name
    checked = 0
    for module in scan(root).modules:
        if not module.executions:
            continue
        with open_replay(root, module, module.executions[0]) as replay:
            steps, arguments = replay.steps, replay.inputs.arguments
        for before, after in itertools.pairwise(steps):
            result = localize_steps(root, before, after, arguments)
            assert result.instruction is None, (module.key, after.index, result.summary)
            checked += after.pass_name == "simplify-while-loops"
    assert checked  # the pass the test is about was among them


def test_bisect_localize_json_says_why_there_is_no_instruction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.UNMATCHED_BEFORE, cases.UNMATCHED_AFTER,
                      cases.ENTRY_ARGS)
    assert main(["bisect", str(root), "t", "--localize", "--json"]) == 1
    culprit = json.loads(capsys.readouterr().out)["culprit"]
    assert culprit["pass"] == "planted"
    assert culprit["instruction"] is None
    assert culprit["instruction_note"].startswith("no single instruction explains it")


def test_later_step_takes_values_it_computes_the_same_way() -> None:
    """A reduce whose reducer was only renamed, on the same operand values, is the earlier
    step's value (not computed again); one whose reducer changed is computed and departs."""
    renamed = cases.REDUCE_BEFORE.replace("%region", "%region.7").replace(
        "ROOT %out = f32[2]{0} exponential(%s)", "ROOT %out = f32[2]{0} log(%s)")
    before = parse_hlo_text(cases.REDUCE_BEFORE)
    localizer = Localizer(before, parse_hlo_text(renamed), cases.REDUCE_ARGS)
    step = Step(0, "p", "hlo", "after-pass")
    result = localizer.run(step, step)
    reduce_key = ((), "s")
    assert localizer.pair.same_computation(reduce_key) == ((), "s")
    assert result.instruction is not None and result.instruction.name == "out"
    changed = Localizer(before, parse_hlo_text(cases.REDUCE_AFTER), cases.REDUCE_ARGS)
    assert changed.pair.same_computation(reduce_key) is None
    found = changed.run(step, step).instruction
    assert found is not None and found.name == "s"


def test_the_same_pair_is_matched_once() -> None:
    """Localizing the same two modules again (another execution) reuses their matching and
    what was worked out per site; another pair is matched anew."""
    before, after = parse_hlo_text(cases.ENTRY_BEFORE), parse_hlo_text(cases.ENTRY_AFTER)
    step = Step(0, "p", "hlo", "after-pass")
    localizer = Localizer(before, after, cases.ENTRY_ARGS)
    first = localizer.matching
    localizer.run(step, step)
    worked_out = dict(localizer.pair.same)
    assert worked_out  # every site judged was looked at
    again = Localizer(before, after, [a + 1 for a in cases.ENTRY_ARGS])
    assert again.matching is first and again.pair.same == worked_out
    other = parse_hlo_text(cases.ENTRY_AFTER)
    fresh = Localizer(before, other, cases.ENTRY_ARGS)
    assert fresh.matching is not first and not fresh.pair.same


def test_cone_module_runs_only_what_the_values_depend_on() -> None:
    """The shadows' first run: the broadcast `b` needs `y` only (every parameter is kept, so the
    cut module takes the same arguments), and its value is the whole module's."""
    module = parse_hlo_text(cases.FUSION_BEFORE)
    cut = cone_module(module, {"b"})
    assert [i.name for i in cut.entry.instructions] == ["x", "y", "b"]
    assert cut.entry.root_name == "b"
    np.testing.assert_array_equal(evaluate_module(cut, cases.FUSION_ARGS),
                                  np.broadcast_to(cases.FUSION_ARGS[1], (2, 3)))
    assert cone_module(module, {"t"}) is module  # everything: the module itself

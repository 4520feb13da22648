"""A miscompiled loop that never ends: the step is a mismatch that did not finish, named by
bisection, and the loop is named (`replay/deadline.py`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.planting import plant
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.replay.bisect import bisect_replay
from workbench.replay.deadline import DidNotFinish, evaluation_deadline
from workbench.replay.hlo import evaluate_module
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import ProcessRunner, open_replay

COUNT_DOWN = """HloModule jit_f

%body (state: (s32[], f32[4])) -> (s32[], f32[4]) {
  %state = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %x = f32[4]{0} get-tuple-element(%state), index=1
  %one = s32[] constant(1)
  %next = s32[] OPCODE(%i, %one)
  %y = f32[4]{0} multiply(%x, %x)
  ROOT %out = (s32[], f32[4]{0}) tuple(%next, %y)
}

%condition (state: (s32[], f32[4])) -> pred[] {
  %state = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %ten = s32[] constant(10)
  ROOT %less = pred[] compare(%i, %ten), direction=LT
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %zero = s32[] constant(0)
  %start = (s32[], f32[4]{0}) tuple(%zero, %x)
  %loop = (s32[], f32[4]{0}) while(%start), condition=%condition, body=%body,
    metadata={op_name="jit(f)/while"}
  ROOT %result = f32[4]{0} get-tuple-element(%loop), index=1
}
"""


def test_a_loop_still_running_at_the_deadline_is_named() -> None:
    ends = parse_hlo_text(COUNT_DOWN.replace("OPCODE", "add"))
    never = parse_hlo_text(COUNT_DOWN.replace("OPCODE", "subtract"))
    x = np.full(4, 0.5, np.float32)
    with evaluation_deadline(60.0):  # ten iterations: far within it, however busy the machine
        np.testing.assert_array_equal(evaluate_module(ends, [x]), np.full(4, 0.5**1024,
                                                                          np.float32))
    with evaluation_deadline(0.2), \
            pytest.raises(DidNotFinish, match=r"did not finish: loop \(jit\(f\)/while\) was "
                                              r"still looping after [0-9,]+ iterations"):
        evaluate_module(never, [x])


# The least time a step's loops get here: the corpus's steps take milliseconds, so a step
# that finishes is far within it even on a busy machine.
FLOOR = 2.0


def test_a_planted_endless_loop_is_the_culprit(corpus: Path, tmp_path: Path) -> None:
    """fori_loop's counter `add` turned into `subtract` from a middle step on: the loop never
    ends there; bisection names that step, and a worker process stops the loop too."""
    dump = tmp_path / "dump"
    plant(corpus / "xla" / "fori_loop", dump, "module_0002", 20, "add", "subtract")
    module = next(m for m in scan(dump).modules if m.id == "module_0002")
    with open_replay(dump, module, module.executions[0]) as replay:
        replay.hang_floor = FLOOR
        verdict = bisect_replay(replay)
    assert verdict.status == Kind.MISMATCH
    assert verdict.culprit is not None and verdict.culprit.step.xla_step == 20
    assert verdict.culprit.comparison is None
    assert verdict.culprit.status.startswith("mismatch: did not finish: while")
    assert "the reference took" in verdict.culprit.status
    assert "did not finish" in verdict.detail and "did not finish" in verdict.outcome.text

    with open_replay(dump, module, module.executions[0], runner=ProcessRunner()) as replay:
        replay.hang_floor = FLOOR
        last = replay.evaluate(len(replay.steps) - 1)
    assert last.kind == Kind.MISMATCH and last.comparison is None
    assert last.status.startswith("mismatch: did not finish: while")


ENDLESS_MLIR = {
    "scf.while": """
    func.func @main(%n: i32) -> i32 {
      %c1 = arith.constant 1 : i32
      %r = scf.while (%x = %n) : (i32) -> i32 {
        %more = arith.cmpi sgt, %x, %c1 : i32
        scf.condition(%more) %x : i32
      } do {
      ^bb0(%x: i32):
        %up = arith.addi %x, %c1 : i32
        scf.yield %up : i32
      }
      return %r : i32
    }""",
    "scf.for": """
    func.func @main(%n: i32) -> i32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %big = arith.constant 9223372036854775807 : index
      %r = scf.for %i = %c0 to %big step %c1 iter_args(%x = %n) -> (i32) {
        scf.yield %x : i32
      }
      return %r : i32
    }""",
    "scf.parallel": """
    func.func @main(%n: i32) -> i32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %big = arith.constant 9223372036854775807 : index
      %r = "scf.parallel"(%c0, %big, %c1, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
      ^bb0(%i: index):
        "scf.reduce"(%n) ({
        ^bb1(%lhs: i32, %rhs: i32):
          "scf.reduce.return"(%lhs) : (i32) -> ()
        }) : (i32) -> ()
      }) : (index, index, index, i32) -> i32
      return %r : i32
    }""",
    "affine.for": """
    func.func @main(%n: i32) -> i32 {
      %r = affine.for %i = 0 to 9223372036854775807 iter_args(%x = %n) -> (i32) {
        affine.yield %x : i32
      }
      return %r : i32
    }""",
}


@pytest.mark.parametrize("loop", sorted(ENDLESS_MLIR))
def test_an_mlir_loop_still_running_at_the_deadline_is_named(loop: str) -> None:
    """A counter planted upwards in an `scf.while`, and counted loops whose bound is as good as
    endless, raise `DidNotFinish` naming the loop; with time to spare a finishing loop is
    not disturbed."""
    from tests.helpers.mlir_snippets import run

    with evaluation_deadline(0.3), pytest.raises(DidNotFinish, match=f"did not finish: {loop} "
                                                  "was still looping after [0-9,]+ iterations"):
        run(ENDLESS_MLIR[loop], np.int32(5))
    with evaluation_deadline(60.0):
        assert int(run(ENDLESS_MLIR["scf.while"], np.int32(-3))) == -3

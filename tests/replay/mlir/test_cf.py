"""cf: branches with block arguments, switch, assert."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run
from workbench.replay.errors import EvaluationError

LOOP = """
func.func @main(%n: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  cf.br ^loop(%c0, %c0 : i64, i64)
^loop(%i: i64, %acc: i64):
  %done = arith.cmpi sge, %i, %n : i64
  cf.cond_br %done, ^exit(%acc : i64), ^body
^body:
  %next = arith.addi %i, %c1 : i64
  %sum = arith.addi %acc, %next : i64
  cf.br ^loop(%next, %sum : i64, i64)
^exit(%r: i64):
  return %r : i64
}"""


def test_branches_carry_block_arguments() -> None:
    assert int(run(LOOP, np.int64(10))) == 55


def test_switch_and_assert() -> None:
    text = """
    func.func @main(%flag: i32) -> i32 {
      cf.switch %flag : i32, [
        default: ^other,
        2: ^two
      ]
    ^two:
      %t = arith.constant 20 : i32
      return %t : i32
    ^other:
      %ok = arith.constant false
      cf.assert %ok, "flag must be 2"
      %o = arith.constant 0 : i32
      return %o : i32
    }"""
    assert int(run(text, np.int32(2))) == 20
    with pytest.raises(EvaluationError, match="flag must be 2"):
        run(text, np.int32(3))

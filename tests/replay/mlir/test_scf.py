"""scf: loops carry values in order (float sums keep their rounding), conditionals, while,
switch, and scf.parallel's reductions."""

from __future__ import annotations

import numpy as np

from tests.helpers.mlir_snippets import run


def test_for_with_iter_args_sums_in_order() -> None:
    text = """
    func.func @main(%t: memref<4xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant -0.0 : f32
      %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %t[%i] : memref<4xf32>
        %n = arith.addf %acc, %v : f32
        scf.yield %n : f32
      }
      return %s : f32
    }"""
    # (1e8 + 1) + ... in f32: each 1 is lost in order; a pairwise sum would keep 2.
    values = np.array([1e8, 1, 1, -1e8], np.float32)
    assert run(text, values) == 0.0
    assert np.signbit(run(text, np.array([-0.0] * 4, np.float32)))


def test_if_while_and_index_switch() -> None:
    text = """
    func.func @main(%n: i32) -> (i32, i32, i32) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %neg = arith.cmpi slt, %n, %c0 : i32
      %abs = scf.if %neg -> (i32) {
        %m = arith.subi %c0, %n : i32
        scf.yield %m : i32
      } else {
        scf.yield %n : i32
      }
      %steps:2 = scf.while (%x = %abs, %k = %c0) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi sgt, %x, %c1 : i32
        scf.condition(%more) %x, %k : i32, i32
      } do {
      ^bb0(%x: i32, %k: i32):
        %h = arith.shrsi %x, %c1 : i32
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %h, %k1 : i32, i32
      }
      %idx = arith.index_cast %steps#1 : i32 to index
      %w = scf.index_switch %idx -> i32
      case 3 {
        %a = arith.constant 30 : i32
        scf.yield %a : i32
      }
      default {
        %b = arith.constant -1 : i32
        scf.yield %b : i32
      }
      return %abs, %steps#1, %w : i32, i32, i32
    }"""
    assert [int(v) for v in run(text, np.int32(-13))] == [13, 3, 30]
    # abs(INT_MIN) wraps to INT_MIN, which is not > 1: the loop does not run.
    assert [int(v) for v in run(text, np.int32(-2147483648))] == [-2147483648, 0, -1]


def test_parallel_reduces_in_iteration_order() -> None:
    text = """
    func.func @main(%t: memref<3xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %init = arith.constant 0.0 : f32
      %r = "scf.parallel"(%c0, %c3, %c1, %init) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
      ^bb0(%i: index):
        %v = memref.load %t[%i] : memref<3xf32>
        "scf.reduce"(%v) ({
        ^bb1(%lhs: f32, %rhs: f32):
          %s = arith.maximumf %lhs, %rhs : f32
          "scf.reduce.return"(%s) : (f32) -> ()
        }) : (f32) -> ()
      }) : (index, index, index, f32) -> f32
      return %r : f32
    }"""
    assert run(text, np.array([1, 7, 3], np.float32)) == 7
    assert np.isnan(run(text, np.array([1, np.nan, 3], np.float32)))

"""Compile a small program with xDSL's pass infrastructure, one pass of it deliberately
wrong, and write what XLA's mlir_replay reads: an MlirCompilationTrace (the IR after each
pass) and an HloSnapshot (the inputs and the result the program should give).

    python examples/xdsl-faulty-pass/make_trace.py [--out DIR]

The program is a dense layer, `y = relu(x @ w + b) * 0.5`, on memrefs. The pipeline is
xDSL's canonicalize, linalg-generalize-named-ops, convert-linalg-to-loops, then
`strength-reduce-multiply`, a rewrite written here with a bug: it means to turn `x * 2.0`
into `x + x` but forgets to check that the constant is 2.0, so `* 0.5` becomes `x + x`.
cse and convert-scf-to-cf follow. `workbench mlir-replay` on the output names the pass.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, linalg, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workbench.protos import hlo_pb2, mlir_trace_pb2, xla_data_pb2

NAME = "module_0000.dense_relu"

PROGRAM = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>)
    -> memref<4x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %acc = memref.alloc() : memref<4x16xf32>
  %y = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%acc : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %sum = arith.addf %v, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    %scaled = arith.mulf %relu, %half : f32
    linalg.yield %scaled : f32
  }
  memref.dealloc %acc : memref<4x16xf32>
  func.return %y : memref<4x16xf32>
}
"""


class MultiplyByTwoAsAdd(RewritePattern):
    """`x * 2.0` -> `x + x`. The bug: any constant multiplier matches, not only 2.0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MulfOp, rewriter: PatternRewriter) -> None:
        constant = op.rhs.owner
        if isinstance(constant, arith.ConstantOp):  # should also check constant.value == 2.0
            rewriter.replace(op, arith.AddfOp(op.lhs, op.lhs))


class StrengthReduceMultiplyPass(ModulePass):
    name = "strength-reduce-multiply"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(MultiplyByTwoAsAdd()).rewrite_module(op)


PIPELINE = (
    CanonicalizePass(),
    LinalgGeneralizeNamedOpsPass(),
    ConvertLinalgToLoopsPass(),
    StrengthReduceMultiplyPass(),
    CommonSubexpressionElimination(),
    ConvertScfToCf(),
    CanonicalizePass(),
)


def printed(module: Operation) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"


def compile_with_trace() -> mlir_trace_pb2.MlirCompilationTrace:
    """Run the pipeline, recording the module after each pass as MLIR's instrumentation does."""
    context = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, linalg.Linalg,
                    scf.Scf, cf.Cf):
        context.load_dialect(dialect)
    module = Parser(context, PROGRAM).parse_module()
    trace = mlir_trace_pb2.MlirCompilationTrace()

    def record(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
        if previous is not None:
            entry = trace.passes.add()
            entry.after_pass = type(previous).__name__
            entry.mlir_module = printed(module)

    PassPipeline(PIPELINE, callback=record).apply(context, module)
    return trace


def literal(array: np.ndarray) -> xla_data_pb2.LiteralProto:
    proto = xla_data_pb2.LiteralProto()
    proto.shape.element_type = xla_data_pb2.F32
    proto.shape.dimensions.extend(array.shape)
    proto.shape.layout.minor_to_major.extend(reversed(range(array.ndim)))
    proto.f32s.extend(array.astype(np.float32).ravel().tolist())
    return proto


def exact_matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w correctly rounded to f32: the products are exact in f64, `math.fsum` adds them
    exactly. (A BLAS `x @ w` rounds differently with the CPU's kernel, and the shipped
    snapshot must be the same bytes on every machine.)"""
    products = x.astype(np.float64)[:, :, None] * w.astype(np.float64)[None, :, :]
    sums = [[math.fsum(products[i, :, j]) for j in range(w.shape[1])] for i in range(x.shape[0])]
    return np.array(sums, np.float64).astype(np.float32)


def snapshot() -> hlo_pb2.HloSnapshot:
    """Seeded inputs, and the result the program should compute (f32)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    expected = np.maximum(exact_matmul(x, w) + b, np.float32(0)) * np.float32(0.5)
    proto = hlo_pb2.HloSnapshot()
    for argument in (x, w, b):
        proto.arguments.append(literal(argument))
    proto.result.CopyFrom(literal(expected))
    proto.execution_platform = "xdsl-example"
    return proto


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    trace = compile_with_trace()
    (args.out / f"{NAME}.mlir-trace.pb").write_bytes(trace.SerializeToString())
    (args.out / f"{NAME}.snapshot.0.pb").write_bytes(snapshot().SerializeToString())
    print(f"wrote {len(trace.passes)} passes to {args.out / (NAME + '.mlir-trace.pb')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

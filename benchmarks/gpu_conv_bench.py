"""Evaluation time of the GPU conv training step with its cuDNN custom-calls, against the same
module just before XLA GPU's conv rewriter (plain `convolution`s), measured in the same run.

    python benchmarks/gpu_conv_bench.py DUMP_DIR [IO_DIR]

DUMP_DIR is `conv_bn_f32` of the xla-gpu corpus (unpacked); IO_DIR (default DUMP_DIR/io) its
recorded inputs. Prints the best of 5 for each step and their ratio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from timing import best_of

from workbench.index import scan
from workbench.loader import load_step_hlo
from workbench.replay.hlo import evaluate_module


def main() -> None:
    root = Path(sys.argv[1])
    io = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "io"
    module = scan(root).find_module("jit_step")
    steps = module.ir_steps("hlo")
    after = next(i for i, s in enumerate(steps) if s.pass_name == "conv-rewriter")
    before, rewritten = (load_step_hlo(root, steps[i]) for i in (after - 1, after))
    arguments = [np.load(io / "inputs" / f"step.arg{k}.npy")
                 for k in range(len(before.entry.parameters))]
    plain = best_of(5, lambda: evaluate_module(before, arguments))
    cudnn = best_of(5, lambda: evaluate_module(rewritten, arguments))
    print(f"before conv-rewriter ({steps[after - 1].pass_name}): {plain * 1e3:.1f} ms")
    print(f"after conv-rewriter (cuDNN calls): {cudnn * 1e3:.1f} ms")
    print(f"ratio cuDNN / convolution: {cudnn / plain:.2f}")


if __name__ == "__main__":
    main()

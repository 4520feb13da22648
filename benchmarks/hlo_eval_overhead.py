"""Per-instruction overhead of the numpy HLO evaluator, against the same numpy calls made
directly, measured in the same run.

    python benchmarks/hlo_eval_overhead.py [CHAIN_LENGTH] [ELEMENTS]

A chain of CHAIN_LENGTH (default 2000) tiny elementwise instructions (add, multiply,
subtract, maximum on f32[ELEMENTS], default 16 elements) is evaluated by `evaluate_module`;
the baseline applies the same numpy ufuncs in a Python loop. Overhead per instruction =
(evaluator time - baseline time) / CHAIN_LENGTH. Best of 7 runs each.
"""

from __future__ import annotations

import sys

import numpy as np
from timing import best_of

from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.replay.hlo import evaluate_module

OPCODES = ("add", "multiply", "subtract", "maximum")
UFUNCS = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract,
          "maximum": np.maximum}


def chain_module(length: int, elements: int) -> HloModule:
    shape = Shape("f32", (elements,))
    instructions = [Instruction("x", "parameter", shape, parameter_number=0),
                    Instruction("y", "parameter", shape, parameter_number=1)]
    previous = "x"
    for i in range(length):
        name = f"v{i}"
        instructions.append(Instruction(name, OPCODES[i % len(OPCODES)], shape,
                                        [previous, "y"]))
        previous = name
    entry = Computation("entry", instructions, previous, is_entry=True)
    return HloModule("chain", [entry], "entry")


def main() -> None:
    length = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    elements = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    module = chain_module(length, elements)
    x = np.linspace(-1, 1, elements, dtype=np.float32)
    y = np.full(elements, 0.5, np.float32)
    ufuncs = [UFUNCS[OPCODES[i % len(OPCODES)]] for i in range(length)]

    def direct() -> np.ndarray:
        value = x
        with np.errstate(all="ignore"):
            for ufunc in ufuncs:
                value = ufunc(value, y)
        return value

    def evaluated() -> object:
        return evaluate_module(module, [x, y])

    assert np.array_equal(np.asarray(evaluated()), direct())
    evaluator = best_of(7, evaluated)
    baseline = best_of(7, direct)
    per_instruction = (evaluator - baseline) / length * 1e6
    print(f"chain of {length} elementwise ops on f32[{elements}]")
    print(f"evaluator: {evaluator * 1e3:.2f} ms   numpy directly: {baseline * 1e3:.2f} ms   "
          f"ratio: {evaluator / baseline:.1f}x")
    print(f"overhead: {per_instruction:.2f} us per instruction beyond numpy's work "
          f"(target: well under 50 us)")


if __name__ == "__main__":
    main()

"""Steps per second of the MLIR replay on the corpus's mlir_replay traces, and where time goes.

    python benchmarks/mlir_replay_bench.py [--repeat 5] [--scale 32]

Prints, best of N, measured in the same run:
  - per trace (clean, broken): the whole replay of its 10 passes on the snapshot's inputs
    (parse, interpret, compare with the reference, nothing cached between repeats), as steps
    per second;
  - per pass: xDSL's parse of the printed module (the baseline: the least any xDSL-based
    replay pays for a step) and the interpretation, with their ratio;
  - the linalg passes again with their shapes scaled up (x: S x 2S, y: 2S x 2S), interpreted
    by the vectorized engine and by the element-by-element loop nest it stands for (forced),
    with their ratio: the speed-up vectorizing buys at that size, for identical results.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timing import best_of  # noqa: E402

from workbench.formats.literal import literal_from_proto  # noqa: E402
from workbench.protos import hlo_pb2, mlir_trace_pb2  # noqa: E402
from workbench.replay.judge.compare import compare  # noqa: E402
from workbench.replay.mlir.evaluate import evaluate_module  # noqa: E402
from workbench.replay.mlir.interpreters import structured  # noqa: E402
from workbench.replay.mlir.parse import parse_module  # noqa: E402

CORPUS = REPO / "tests" / "data" / "corpus" / "mlir"
TRACE = "module_0000.jit_f.mlir-trace.pb"
SNAPSHOT = "module_0000.jit_f.snapshot.0.pb"


def load(folder: str) -> tuple[list[tuple[str, str]], list[np.ndarray]]:
    trace = mlir_trace_pb2.MlirCompilationTrace()
    trace.ParseFromString((CORPUS / folder / TRACE).read_bytes())
    snapshot = hlo_pb2.HloSnapshot()
    snapshot.ParseFromString((CORPUS / folder / SNAPSHOT).read_bytes())
    arguments = [literal_from_proto(argument) for argument in snapshot.arguments]
    return [(entry.after_pass, entry.mlir_module) for entry in trace.passes], arguments


def replay_all(steps: list[tuple[str, str]], arguments: list[np.ndarray]) -> None:
    parse_module.cache_clear()
    reference = None
    for _, text in steps:
        module, resources = parse_module(text)
        value = evaluate_module(module, arguments, None, resources)
        if reference is None:
            reference = value
        compare(reference, value)


def scaled(text: str, size: int) -> str:
    """The step with x: 4x8 -> S x 2S, y: 8x8 -> 2S x 2S, results 8 -> 2S."""
    wide = 2 * size
    text = re.sub(r"\b8x8x", "@Y@", text)
    text = re.sub(r"\b4x8x", "@X@", text)
    text = re.sub(r"<8x", f"<{wide}x", text)
    return text.replace("@Y@", f"{wide}x{wide}x").replace("@X@", f"{size}x{wide}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale", type=int, default=32, help="S for the scaled linalg passes")
    args = parser.parse_args()

    print("whole replays (parse + interpret + compare, 10 passes each)")
    for folder in ("mlir-trace-clean", "mlir-trace-broken"):
        steps, arguments = load(folder)
        replay_all(steps, arguments)  # imports, first-use caches
        seconds = best_of(args.repeat, lambda: replay_all(steps, arguments))  # noqa: B023
        print(f"  {folder:18} {seconds * 1000:8.1f} ms   {len(steps) / seconds:6.1f} steps/s")

    print("\nper pass: xDSL parse (baseline) vs interpretation")
    steps, arguments = load("mlir-trace-clean")
    total_parse = total_eval = 0.0
    for index, (name, text) in enumerate(steps):

        def parse(text: str = text) -> object:
            parse_module.cache_clear()
            return parse_module(text)

        module, resources = parse_module(text)
        parse_time = best_of(args.repeat, parse)
        eval_time = best_of(
            args.repeat,
            lambda module=module, resources=resources: evaluate_module(  # type: ignore[misc]  # defaults bind the loop's values
                module, arguments, None, resources
            ),
        )
        total_parse += parse_time
        total_eval += eval_time
        print(f"  {index} {name:36} parse {parse_time * 1000:6.1f} ms   "
              f"interpret {eval_time * 1000:6.1f} ms   ratio {eval_time / parse_time:5.2f}")
    print(f"  all passes: parse {total_parse * 1000:.1f} ms, interpret {total_eval * 1000:.1f} ms,"
          f" ratio {total_eval / total_parse:.2f}")

    size = args.scale
    print(f"\nlinalg passes scaled to x: {size}x{2 * size}, y: {2 * size}x{2 * size}: "
          "vectorized vs loop nest")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((size, 2 * size)).astype(np.float32)
    y = rng.standard_normal((2 * size, 2 * size)).astype(np.float32)
    original = structured._can_vectorize
    for index, (name, text) in enumerate(steps[:7]):
        module, resources = parse_module(scaled(text, size))

        def run(module: object = module, resources: object = resources) -> object:
            return evaluate_module(module, [x, y], None, resources)  # type: ignore[arg-type]  # the parsed module and its resources

        vectorized_value = run()
        vectorized = best_of(args.repeat, run)
        structured._can_vectorize = lambda *_: False  # type: ignore[assignment]  # the vectorized path turned off for the baseline
        try:
            loop_value = run()
            loop_nest = best_of(1, run)
        finally:
            structured._can_vectorize = original
        same = np.array_equal(vectorized_value, loop_value)
        print(f"  {index} {name:36} vectorized {vectorized * 1000:7.1f} ms   "
              f"loop nest {loop_nest * 1000:8.1f} ms   x{loop_nest / vectorized:6.1f}   "
              f"{'identical' if same else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

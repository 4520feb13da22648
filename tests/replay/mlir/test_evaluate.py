"""evaluate_mlir on the corpus: the mlir_replay traces, JAX's StableHLO, the IR printed after
every pass of the iree-opt pipeline (three print-ir flavours) and iree-compile's IR tree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run, snapshot_values, trace_texts
from workbench.index import scan
from workbench.loader import read_text
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.judge.compare import compare
from workbench.replay.mlir import evaluate_mlir
from workbench.replay.mlir.backend import replayable_steps

TRACE = "module_0000.jit_f.mlir-trace.pb"
SNAPSHOT = "module_0000.jit_f.snapshot.0.pb"


@pytest.fixture(scope="module")
def recorded(corpus: Path) -> tuple[list[np.ndarray], np.ndarray]:
    return snapshot_values(corpus / "mlir" / "mlir-trace-clean" / SNAPSHOT)


def test_snapshot_holds_the_readme_inputs(recorded: tuple[list[np.ndarray], np.ndarray]) -> None:
    (x, y), _ = recorded
    np.testing.assert_array_equal(x, np.ones((4, 8), np.float32))
    np.testing.assert_array_equal(y, (np.arange(64, dtype=np.float32) / 64).reshape(8, 8))


def test_every_step_of_the_clean_trace_matches_the_snapshot(
    corpus: Path, recorded: tuple[list[np.ndarray], np.ndarray]
) -> None:
    arguments, result = recorded
    entries = trace_texts(corpus / "mlir" / "mlir-trace-clean" / TRACE)
    assert len(entries) == 10
    for pass_name, text in entries:
        comparison = compare(result, evaluate_mlir(text, arguments))
        assert comparison.ok, (pass_name, comparison.summary)


def test_broken_trace_differs_from_convert_linalg_to_loops_on(
    corpus: Path, recorded: tuple[list[np.ndarray], np.ndarray]
) -> None:
    arguments, result = snapshot_values(corpus / "mlir" / "mlir-trace-broken" / SNAPSHOT)
    entries = trace_texts(corpus / "mlir" / "mlir-trace-broken" / TRACE)
    verdicts = [compare(result, evaluate_mlir(text, arguments)).ok for _, text in entries]
    assert verdicts == [True] * 7 + [False] * 3
    assert entries[7][0] == "ConvertLinalgToLoopsPass"


def test_jax_stablehlo_input_matches_the_snapshot(
    corpus: Path, recorded: tuple[list[np.ndarray], np.ndarray]
) -> None:
    arguments, result = recorded
    for folder in ("iree-opt-to-loops", "iree-compile-jit_f"):
        text = (corpus / "mlir" / folder / "input.mlir").read_text()
        assert "stablehlo.dot_general" in text
        value = evaluate_mlir(text, arguments)
        assert value.dtype == np.float32 and value.shape == (8,)
        assert compare(result, value).ok


@pytest.mark.parametrize(
    "log",
    [
        "print-ir-after-change.log",
        "print-ir-before-after-module-scope.log",
        "print-ir-generic-debuginfo.log",
    ],
)
def test_every_printed_step_of_the_iree_opt_pipeline(
    corpus: Path, recorded: tuple[list[np.ndarray], np.ndarray], log: str
) -> None:
    arguments, result = recorded
    root = corpus / "mlir" / "iree-opt-to-loops"
    dump = scan(root / log)
    (module,) = [m for m in dump.modules if m.steps]
    steps = replayable_steps(module)
    assert len(steps) >= 6
    for step in steps:
        value = evaluate_mlir(read_text(dump.root, step.text), arguments)
        assert compare(result, value).ok, (step.index, step.pass_name)


def test_iree_compile_tree_replays_until_iree_dialects_take_over(
    corpus: Path, recorded: tuple[list[np.ndarray], np.ndarray]
) -> None:
    arguments, result = recorded
    folder = corpus / "mlir" / "iree-compile-jit_f" / "ir-tree" / "builtin_module_jit_f"
    for number, name in enumerate(
        ["iree-check-vhlostablehlo-mix-usage", "vhlo-to-version", "vhlo-legalize-to-stablehlo",
         "iree-stablehlo-preprocessing-flatten-scf-tuples",
         "iree-stablehlo-to-stablehlo-preprocessing", "convert-shape-to-std", "inline",
         "iree-stablehlo-to-iree-input", "reconcile-unrealized-casts",
         "iree-stablehlo-verify-compiler-input-legality", "iree-auto-input-conversion"]
    ):
        text = (folder / f"{number}_{name}.mlir").read_text()
        assert compare(result, evaluate_mlir(text, arguments)).ok, name
    with pytest.raises(Unsupported, match="util.func"):
        evaluate_mlir((folder / "11_iree-import-public.mlir").read_text(), arguments)
    with pytest.raises(Unsupported):
        evaluate_mlir((folder / "20_iree-hal-assign-target-devices.mlir").read_text(), arguments)


def test_unregistered_ops_are_unsupported(corpus: Path) -> None:
    folder = corpus / "mlir" / "crash-reproducer"
    value = np.ones(4, np.float32)
    with pytest.raises(Unsupported, match="foo.opaque"):
        evaluate_mlir((folder / "input.mlir").read_text(), [value])
    with pytest.raises(Unsupported, match="foo.opaque"):  # after its external_resources block
        evaluate_mlir((folder / "reproducer.mlir").read_text(), [value])


def test_entry_points() -> None:
    text = """
    func.func @one(%a: i32) -> i32 {
      return %a : i32
    }
    func.func @two(%a: i32) -> i32 {
      %0 = arith.addi %a, %a : i32
      return %0 : i32
    }"""
    assert int(evaluate_mlir(text, [np.int32(3)], entry_point="two")) == 6
    with pytest.raises(EvaluationError, match="no @main"):
        evaluate_mlir(text, [np.int32(3)])
    with pytest.raises(EvaluationError, match="no function @three"):
        evaluate_mlir(text, [np.int32(3)], entry_point="three")


def test_arguments_are_checked_and_never_mutated() -> None:
    text = """
    func.func @main(%m: memref<2xi32>) -> memref<2xi32> {
      %c0 = arith.constant 0 : index
      %v = arith.constant 9 : i32
      memref.store %v, %m[%c0] : memref<2xi32>
      return %m : memref<2xi32>
    }"""
    argument = np.array([1, 2], np.int32)
    assert run(text, argument).tolist() == [9, 2]
    assert argument.tolist() == [1, 2]
    # u32 data for a signless i32 parameter: the same bits.
    assert run(text, np.array([1, 4294967295], np.uint32)).tolist() == [9, -1]
    with pytest.raises(EvaluationError, match="shape"):
        run(text, np.zeros(3, np.int32))
    with pytest.raises(EvaluationError, match="element type float32"):
        run(text, np.zeros(2, np.float32))
    with pytest.raises(EvaluationError, match="takes 1 arguments"):
        evaluate_mlir(text, [])


def test_unsupported_before_any_work() -> None:
    text = """
    func.func @main(%a: f32) -> f32 {
      %0 = math.sinh %a : f32
      %1 = "mystery.op"(%0) : (f32) -> f32
      return %1 : f32
    }"""
    with pytest.raises(Unsupported) as raised:
        run(text, np.float32(1))
    assert str(raised.value) == "unsupported: mystery.op"


def jax_module_replays(folder: Path) -> list[tuple[str, str]]:
    """(module, status) for every execution of every module whose `module.mlir` (the
    StableHLO JAX handed to XLA) is in `folder`: the evaluation compared with the result the
    compiled program recorded."""
    dump = scan(folder)
    outcomes = []
    for module in dump.modules:
        inputs = [s for s in module.ir_steps("mlir") if s.file and s.file.endswith("module.mlir")]
        if not inputs or not module.executions:
            continue
        text = read_text(dump.root, inputs[0].text)
        for execution in module.executions:
            arguments, result = snapshot_values(dump.root / execution.file)
            try:
                value = evaluate_mlir(text, arguments)
            except Unsupported as error:
                outcomes.append((module.key, str(error)))
                continue
            outcomes.append((module.key, "ok" if compare(result, value).ok else "mismatch"))
    return outcomes


def test_jax_modules_of_the_xla_corpus_reproduce_their_snapshots(corpus: Path) -> None:
    """A cross-check of the XLA CPU results: StableHLO interpreted by the replay gives what
    the compiled programs recorded, except where the corpus planted a miscompile."""
    total = 0
    for name in ("mlp", "layernorm", "fori_loop", "int_ops", "slicing", "layernorm-broken-fusion"):
        outcomes = jax_module_replays(corpus / "xla" / name)
        total += len(outcomes)
        failing = [(module, status) for module, status in outcomes if status != "ok"]
        if name == "layernorm-broken-fusion":
            assert failing == [("module_0010", "mismatch")]
        else:
            assert failing == [], name
    assert total == 41


@pytest.mark.slow
def test_jax_numpy_reducer_tests_reproduce_their_snapshots(corpus: Path) -> None:
    outcomes = jax_module_replays(corpus / "xla-jax-tests" / "numpy-reducers")
    assert len(outcomes) == 583
    assert [o for o in outcomes if o[1] != "ok"] == []


def test_recursive_calls_keep_their_own_values() -> None:
    text = """
    func.func @main(%n: i64) -> i64 {
      %c1 = arith.constant 1 : i64
      %small = arith.cmpi sle, %n, %c1 : i64
      %r = scf.if %small -> (i64) {
        scf.yield %c1 : i64
      } else {
        %m = arith.subi %n, %c1 : i64
        %f = func.call @main(%m) : (i64) -> i64
        %p = arith.muli %n, %f : i64
        scf.yield %p : i64
      }
      return %r : i64
    }"""
    assert int(run(text, np.int64(10))) == 3628800
    assert int(run(text, np.int64(21))) == 51090942171709440000 % 2**64 - 2**64  # wraps


def test_functions_returning_nothing_are_observed_through_their_buffers() -> None:
    text = """
    func.func @main(%scale: f32, %m: memref<2xf32>) {
      %c0 = arith.constant 0 : index
      %v = memref.load %m[%c0] : memref<2xf32>
      %s = arith.mulf %v, %scale : f32
      memref.store %s, %m[%c0] : memref<2xf32>
      return
    }"""
    assert run(text, np.float32(3), np.array([2, 5], np.float32)).tolist() == [6, 5]
    with pytest.raises(EvaluationError, match="no result to compare"):
        run("func.func @main(%a: f32) {\n  return\n}", np.float32(1))

"""`workbench reduce` on MLIR steps: the faulty strength reduction of the xDSL example reduced
to `%scaled` alone, in a trace and snapshot that mlir-replay, replay and triage read and that
show the same departure; the op's inputs are the earlier step's values at the run that
departs; a culprit reading a function argument takes it as an argument too."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.formats.literal import literal_from_proto
from workbench.formats.mlir_trace import parse_trace
from workbench.model import Source, Step
from workbench.protos import hlo_pb2, mlir_trace_pb2
from workbench.replay.localize.result import LocalizeError
from workbench.replay.reduce.hlo import reduce_to_folder

EXAMPLE = Path(__file__).parents[3] / "examples" / "xdsl-faulty-pass"
TRACE = "module_0000.dense_relu.mlir-trace.pb"
SNAPSHOT = "module_0000.dense_relu.snapshot.0.pb"


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("reduce") / "reduced"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["reduce", str(EXAMPLE), "dense_relu", "--out", str(out), "--json"])
    assert status == 0
    return out, json.loads(printed.getvalue())


def test_reduced_pair_reproduces(reduced: tuple[Path, dict]) -> None:
    out, payload = reduced
    assert payload["ir"] == "mlir"
    assert payload["reproduces"] and payload["verdict"] == "mismatch"
    assert payload["culprit"] == "StrengthReduceMultiplyPass"
    assert payload["reference_check"]["ok"]
    assert payload["instructions"] == {"before": 2, "after": 1}  # constant + mulf; addf
    assert sorted(payload["files"]) == sorted([TRACE, SNAPSHOT])
    assert sorted(p.name for p in out.iterdir()) == sorted([TRACE, SNAPSHOT, "README.txt"])
    readme = (out / "README.txt").read_text()
    assert TRACE in readme and SNAPSHOT in readme and "StrengthReduceMultiplyPass" in readme
    assert f"workbench bisect {out} dense_relu" in readme


def test_reduced_modules_keep_the_op_and_its_constant(reduced: tuple[Path, dict]) -> None:
    out, _ = reduced
    passes = parse_trace((out / TRACE).read_bytes(), TRACE).passes
    assert [p.after_pass for p in passes] == ["ConvertLinalgToLoopsPass",
                                              "StrengthReduceMultiplyPass"]
    before, after = (p.mlir_module for p in passes)
    for text in (before, after):
        assert "func.func @main(%relu: f32) -> f32" in text
        assert "memref" not in text and "scf.for" not in text
    assert "%half = arith.constant 5.000000e-01 : f32" in before
    assert "%scaled = arith.mulf %relu, %half : f32" in before
    assert "%scaled = arith.addf %relu, %relu : f32" in after


def test_inputs_are_the_values_at_the_departing_iteration(reduced: tuple[Path, dict]) -> None:
    """The third run of `%scaled` is element [0, 2] of relu(x @ w + b): the snapshot's
    argument is that relu, its result half of it (numpy's own sum, compared with a
    tolerance: the order of the additions may differ)."""
    out, payload = reduced
    original = hlo_pb2.HloSnapshot.FromString((EXAMPLE / SNAPSHOT).read_bytes())
    x, w, b = (np.asarray(literal_from_proto(a)) for a in original.arguments)
    relu = max(float(np.dot(x[0].astype(np.float64), w[:, 2]) + b[2]), 0.0)
    snapshot = hlo_pb2.HloSnapshot.FromString((out / SNAPSHOT).read_bytes())
    (argument,) = (np.asarray(literal_from_proto(a)) for a in snapshot.arguments)
    result = np.asarray(literal_from_proto(snapshot.result))
    assert argument.shape == () and argument.dtype == np.float32
    assert relu > 0 and argument == pytest.approx(relu, rel=1e-5)
    assert result == pytest.approx(relu * 0.5, rel=1e-5)
    assert payload["localization"]["instruction"]["name"] == "%scaled"


def test_mlir_replay_and_triage_read_the_folder(reduced: tuple[Path, dict],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = reduced
    assert main(["mlir-replay", f"--mlir-compilation-trace={out / TRACE}",
                 f"--hlo-snapshot={out / SNAPSHOT}"]) == 1
    text = capsys.readouterr().out
    assert "Running IR after ConvertLinalgToLoopsPass." in text
    assert "Running IR after StrengthReduceMultiplyPass." in text
    assert main(["triage", str(out), "-j", "0", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert result["status"] == "mismatch"
    assert result["culprit"]["pass"] == "StrengthReduceMultiplyPass"


BEFORE = """builtin.module {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %two = arith.constant dense<2.000000e+00> : tensor<3xf32>
    %y = arith.mulf %x, %two : tensor<3xf32>
    %z = arith.subf %y, %x : tensor<3xf32>
    func.return %z : tensor<3xf32>
  }
}
"""
AFTER = BEFORE.replace("arith.subf %y, %x", "arith.addf %y, %x")


def _trace_folder(folder: Path) -> tuple[Step, Step]:
    folder.mkdir()
    trace = mlir_trace_pb2.MlirCompilationTrace()
    for name, text in (("first", BEFORE), ("planted", AFTER)):
        entry = trace.passes.add()
        entry.after_pass, entry.mlir_module = name, text
    file = "module_0000.t.mlir-trace.pb"
    (folder / file).write_bytes(trace.SerializeToString())
    return (Step(0, "first", "mlir", "pass", text=Source(file, entry=0)),
            Step(1, "planted", "mlir", "pass", text=Source(file, entry=1)))


def test_an_argument_of_the_function_becomes_an_argument(tmp_path: Path) -> None:
    """`%z` reads `%y` (an op) and `%x` (the function's argument): both become arguments,
    in the order the later op reads them, with the earlier step's values."""
    from workbench.replay.localize.mlir import localize_mlir  # imports xDSL: not at collection

    before_step, after_step = _trace_folder(tmp_path / "dump")
    x = np.array([1.0, -2.0, 0.5], np.float32)
    localization = localize_mlir(BEFORE, AFTER, [x], before_step, after_step)
    assert localization.instruction is not None and localization.instruction.name == "%z"
    out = tmp_path / "out"
    reduction = reduce_to_folder(tmp_path / "dump", localization, "t", out)
    assert reduction.reproduces, reduction.detail
    assert reduction.culprit_pass == "planted"
    reduced = parse_trace((out / reduction.files[0]).read_bytes(), reduction.files[0])
    assert "func.func @main(%y: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32>" in \
        reduced.passes[0].mlir_module
    snapshot = hlo_pb2.HloSnapshot.FromString((out / reduction.files[1]).read_bytes())
    y, argument = (np.asarray(literal_from_proto(a)) for a in snapshot.arguments)
    np.testing.assert_array_equal(argument, x)
    np.testing.assert_array_equal(y, x * np.float32(2))


def test_nothing_to_reduce_says_so(tmp_path: Path) -> None:
    from workbench.replay.localize.mlir import localize_mlir  # imports xDSL: not at collection

    before_step, after_step = _trace_folder(tmp_path / "dump")
    x = np.array([1.0, -2.0, 0.5], np.float32)
    same = localize_mlir(BEFORE, BEFORE, [x], before_step, after_step)
    with pytest.raises(LocalizeError, match="nothing to reduce"):
        reduce_to_folder(tmp_path / "dump", same, "t", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_steps_of_a_print_ir_log_reduce_to_a_trace(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Steps read from a print-ir log (inputs from .npy) are written as a trace the scanner
    claims for the module, with its snapshot."""
    log = tmp_path / "dump" / "run.log"
    log.parent.mkdir()
    log.write_text("".join(f"// -----// IR Dump After {name}: {name.lower()} //----- //\n"
                           + text.replace("builtin.module {", "module {")
                           for name, text in (("First", BEFORE), ("Planted", AFTER))))
    inputs = tmp_path / "x.npy"
    np.save(inputs, np.array([1.0, -2.0, 0.5], np.float32))
    out = tmp_path / "out"
    assert main(["reduce", str(log), "run", "--inputs", str(inputs), "--out", str(out),
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["files"] == ["module_0000.run.mlir-trace.pb",
                                "module_0000.run.snapshot.0.pb"]
    assert payload["reproduces"] and payload["culprit"] == "Planted"

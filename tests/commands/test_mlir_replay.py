"""`workbench mlir-replay`: XLA mlir_replay's flags and output, on the corpus traces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.commands.mlir_replay import format_value

TRACE = "module_0000.jit_f.mlir-trace.pb"
SNAPSHOT = "module_0000.jit_f.snapshot.0.pb"
PASSES = [
    "ConvertStableHloToIreeInputDialects", "CanonicalizerPass", "CSEPass",
    "LinalgGeneralizeNamedOpsPass", "LinalgElementwiseOpFusionPass", "CanonicalizerPass",
    "OneShotBufferizePass", "ConvertLinalgToLoopsPass", "CanonicalizerPass", "CSEPass",
]


def replay(corpus: Path, folder: str, *flags: str) -> list[str]:
    base = corpus / "mlir" / folder
    return ["mlir-replay", f"--mlir-compilation-trace={base / TRACE}",
            f"--hlo-snapshot={base / SNAPSHOT}", *flags]


def test_broken_trace_prints_like_mlir_replay(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(replay(corpus, "mlir-trace-broken", "--print-changes-only")) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line for line in lines if line.startswith("Running")] == [
        f"Running IR after {name}." for name in PASSES
    ]
    # Results only where they change: after the first pass and after the broken one.
    results = [i for i, line in enumerate(lines) if line == "Results:"]
    assert [lines[i - 1] for i in results] == [
        "Running IR after ConvertStableHloToIreeInputDialects.",
        "Running IR after ConvertLinalgToLoopsPass.",
    ]
    assert lines[results[0] + 1].startswith("TensorOrMemref<8xf32>: [7.99803, 7.99846, ")
    assert "first pass whose result differs: ConvertLinalgToLoopsPass (pass 7)" in captured.err
    assert "recorded result vs the first pass: ok" in captured.err


def test_stop_after_first_failure(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(replay(corpus, "mlir-trace-broken", "--stop-after-first-failure")) == 1
    out = capsys.readouterr().out
    assert out.count("Running IR after") == 8
    assert out.count("Results:") == 8


def test_clean_trace(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(replay(corpus, "mlir-trace-clean", "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passes"] == 10 and report["culprit"] is None
    assert [r["status"] for r in report["results"]] == ["ok"] * 10
    assert report["recorded"]["ok"] is True


def test_without_snapshot_random_inputs_still_find_the_pass(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = corpus / "mlir" / "mlir-trace-broken" / TRACE
    assert main(["mlir-replay", f"--mlir-compilation-trace={trace}", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["inputs"] == "fake data (seed 0)"
    assert report["culprit"] == {"index": 7, "pass": "ConvertLinalgToLoopsPass"}


def test_npy_inputs_and_entry_point(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, np.ones((4, 8), np.float32))
    np.save(y, np.ones((8, 8), np.float32))
    trace = corpus / "mlir" / "mlir-trace-clean" / TRACE
    args = ["mlir-replay", f"--mlir-compilation-trace={trace}", "--inputs", str(x), str(y)]
    assert main([*args, "--print-changes-only"]) == 0
    assert capsys.readouterr().out.count("Results:") == 1
    assert main([*args, "--entry-point=nope", "--stop-after-first-failure"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("Running IR after") == 1
    assert "no function @nope" in captured.err


def test_trace_directory_lists_failing_traces(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder, prefix in (("mlir-trace-clean", "module_0001.jit_g"),
                           ("mlir-trace-broken", "module_0002.jit_h")):
        shutil.copy(corpus / "mlir" / folder / TRACE, tmp_path / f"{prefix}.mlir-trace.pb")
        shutil.copy(corpus / "mlir" / folder / SNAPSHOT, tmp_path / f"{prefix}.snapshot.0.pb")
    (tmp_path / "module_0003.jit_k.mlir-trace.pb").write_bytes(
        (corpus / "mlir" / "mlir-trace-clean" / TRACE).read_bytes())
    assert main(["mlir-replay", f"--mlir-compilation-trace-dir={tmp_path}"]) == 1
    out = capsys.readouterr().out
    assert "module_0001.jit_g" not in out
    assert f"Failures for {tmp_path / 'module_0002.jit_h.mlir-trace.pb'}:" in out
    assert "ConvertLinalgToLoopsPass" in out
    assert (f"run: workbench mlir-replay --mlir-compilation-trace="
            f"{tmp_path / 'module_0002.jit_h.mlir-trace.pb'} --hlo-snapshot="
            f"{tmp_path / 'module_0002.jit_h.snapshot.0.pb'} --print-changes-only "
            f"--stop-after-first-failure") in out
    assert "no snapshot found" in out
    assert out.strip().endswith("2 of 3 traces fail (3 snapshot replays).")


def test_bad_input_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "module_0000.x.mlir-trace.pb"
    broken.write_bytes(b"\xff\xff\xff")
    assert main(["mlir-replay", f"--mlir-compilation-trace={broken}"]) == 2
    assert "not an MlirCompilationTrace proto" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.array([1.5, -0.0, np.nan], np.float32), "TensorOrMemref<3xf32>: [1.5, -0, nan]"),
        (np.array([[True, False]]), "TensorOrMemref<1x2xi1>: [[true, false]]"),
        (np.array(7, np.uint8), "TensorOrMemref<ui8>: 7"),
        (np.array([1 - 2j], np.complex64), "TensorOrMemref<1xcomplex<f32>>: [1-2i]"),
        ((np.array(1, np.int32), np.array([2], np.int64)),
         "(TensorOrMemref<i32>: 1, TensorOrMemref<1xi64>: [2])"),
    ],
)
def test_values_print_as_the_mlir_interpreter_prints_them(value: object, text: str) -> None:
    assert format_value(value) == text

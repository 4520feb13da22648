"""The MLIR backend in the replay machinery: which steps it replays, parameter types, the
recorded inputs of a trace's snapshot, and bisection/triage on the corpus traces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.backends import open_backend
from workbench.replay.bisect import bisect_replay, evaluation_bound
from workbench.replay.inputs import InputSpec
from workbench.replay.mlir.backend import MlirBackend
from workbench.replay.steps import open_replay


def test_trace_module_gets_the_mlir_backend(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "mlir-trace-clean")
    (module,) = dump.modules
    backend = open_backend(dump.root, module)
    assert isinstance(backend, MlirBackend)
    assert [step.pass_name for step in backend.steps()][6:8] == [
        "OneShotBufferizePass", "ConvertLinalgToLoopsPass"
    ]
    assert backend.parameter_specs() == [
        (np.dtype(np.float32), (4, 8)), (np.dtype(np.float32), (8, 8))
    ]
    arguments, recorded = backend.recorded(module.executions[0])
    assert [a.shape for a in arguments] == [(4, 8), (8, 8)] and recorded.shape == (8,)


def test_before_dumps_repeat_states_and_are_left_out(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-opt-to-loops" / "print-ir-before-after-module-scope.log")
    (module,) = [m for m in dump.modules if m.steps]
    steps = MlirBackend(dump.root, module).steps()
    assert steps[0].kind == "before-pass"  # the pipeline's input: the reference
    assert [s.kind for s in steps[1:]] == ["pass"] * 10
    assert "stablehlo.dot_general" in (dump.root / steps[0].text.file).read_text()[
        steps[0].text.start : steps[0].text.end
    ]


def test_xla_modules_can_cross_check_their_jax_input(corpus: Path) -> None:
    dump = scan(corpus / "xla" / "layernorm-broken-fusion")
    module = dump.find_module("module_0010")
    assert [open_backend(dump.root, module, name).name for name in ("hlo", "mlir")] == [
        "hlo", "mlir"]
    with open_replay(dump.root, module, module.executions[0], backend="mlir") as replay:
        verdict = bisect_replay(replay)
    # One step, module.mlir, which computes rsqrt as JAX asked: the recording (made by the
    # miscompiled program) disagrees with it.
    assert verdict.status == "mismatch"
    assert replay.recorded_comparison is not None and not replay.recorded_comparison.ok


def test_bisection_names_convert_linalg_to_loops(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "mlir-trace-broken")
    (module,) = dump.modules
    with open_replay(dump.root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay)
    assert verdict.status == "mismatch"
    assert verdict.culprit is not None
    assert (verdict.culprit.step.index, verdict.culprit.step.pass_name) == (
        7, "ConvertLinalgToLoopsPass"
    )
    assert verdict.evaluations <= evaluation_bound(10)
    assert verdict.recorded is not None and verdict.recorded.ok


def test_print_ir_log_replays_on_npy_inputs(corpus: Path, tmp_path: Path) -> None:
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, np.ones((4, 8), np.float32))
    np.save(y, (np.arange(64, dtype=np.float32) / 64).reshape(8, 8))
    dump = scan(corpus / "mlir" / "iree-opt-to-loops" / "print-ir-after-change.log")
    (module,) = [m for m in dump.modules if m.steps]
    with open_replay(dump.root, module, spec=InputSpec(npy=(x, y))) as replay:
        results = replay.run()
    assert [r.kind for r in results] == ["ok"] * len(module.steps)


@pytest.mark.parametrize(
    ("folder", "jobs", "status"),
    [("mlir-trace-broken", "0", 1), ("mlir-trace-broken", "1", 1), ("mlir-trace-clean", "0", 0)],
)
def test_triage_json(corpus: Path, capsys: pytest.CaptureFixture[str], folder: str, jobs: str,
                     status: int) -> None:
    """`--jobs 1` bisects in a worker process, which reads the trace entries itself."""
    assert main(["triage", str(corpus / "mlir" / folder), "--json", "--jobs", jobs]) == status
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["module"] == "module_0000" and result["execution"] == "snapshot.0"
    if status:
        assert result["status"] == "mismatch"
        assert result["culprit"]["index"] == 7
        assert result["culprit"]["pass"] == "ConvertLinalgToLoopsPass"
        assert result["evaluations"] <= evaluation_bound(10)
    else:
        assert result["status"] == "ok" and result["culprit"] is None


def test_fake_data_for_a_damaged_first_step_names_the_file(corpus: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """A print-ir log cut inside its first dump: the parameter types cannot be read, and the
    replay says which file and why instead of only that they are unknown."""
    log = "print-ir-after-change.log"
    data = (corpus / "mlir" / "iree-opt-to-loops" / log).read_bytes()
    first = data.index(b"// -----// IR Dump After")
    (tmp_path / log).write_bytes(data[: data.index(b"tensor.empty", first)])
    status = main(["replay", str(tmp_path), log, "--fake-data"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith(f"workbench replay: cannot get the inputs: {log}: the IR of step 0 "
                          "(ConvertStableHloToIreeInputDialects) cannot be parsed: ")

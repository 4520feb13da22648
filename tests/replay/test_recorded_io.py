"""`--recorded DIR`: the inputs and outputs JAX's caller recorded become an execution of module
jit_NAME, replayed like a snapshot (the linear solve the H100 corpus recorded, with its
cuSOLVER and cuBLAS calls), with a clear error for inputs that do not fit the entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main

DUMP = Path(__file__).parents[1] / "data" / "xla_gpu" / "linalg_solve"


@pytest.mark.parametrize("command", [["replay"], ["bisect"]])
def test_recorded_outputs_are_the_execution_result(command: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    status = main([*command, str(DUMP), "jit_f", "--recorded", str(DUMP / "io"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0, report
    assert "recorded f" in json.dumps(report)


def test_triage_replays_the_recorded_execution(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(DUMP), "--recorded", str(DUMP / "io"), "-j", "0", "--json"])
    output = capsys.readouterr().out
    assert status == 0, output
    results = [r for r in json.loads(output)["results"] if r["execution"] == "recorded f"]
    assert [r["status"] for r in results] == ["ok"]


def test_a_changed_recorded_output_is_a_mismatch(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    recorded = tmp_path / "io"
    shutil.copytree(DUMP / "io", recorded)
    out = recorded / "outputs" / "f.out0.npy"
    np.save(out, np.load(out) * 1.01)
    status = main(["replay", str(DUMP), "jit_f", "--recorded", str(recorded)])
    assert status == 1
    assert "recorded result vs reference: mismatch" in capsys.readouterr().out


def test_inputs_that_do_not_fit_name_the_first_file(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    recorded = tmp_path / "io"
    shutil.copytree(DUMP / "io", recorded)
    np.save(recorded / "inputs" / "f.arg1.npy", np.zeros((64, 9), np.float32))
    status = main(["replay", str(DUMP), "jit_f", "--recorded", str(recorded)])
    error = capsys.readouterr().err
    assert status == 2
    assert "f.arg1.npy: parameter 1 is f32[64,8], the file holds float32[64, 9]" in error


def test_a_folder_for_no_module_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "inputs").mkdir()
    np.save(tmp_path / "inputs" / "g.arg0.npy", np.zeros(3, np.float32))
    status = main(["replay", str(DUMP), "jit_f", "--recorded", str(tmp_path)])
    assert status == 2
    assert "the dump has no module jit_g" in capsys.readouterr().err


def test_attaching_again_adds_no_second_execution() -> None:
    """The app attaches the folder to every rescanned dump, the same modules again included."""
    from workbench.index import scan
    from workbench.replay.recorded_io import attach_recorded

    dump = scan(DUMP)
    assert attach_recorded(dump, DUMP / "io") == 1
    assert attach_recorded(dump, DUMP / "io", require=False) == 1
    module = dump.find_module("jit_f")
    assert [e.id for e in module.executions] == ["recorded f"]


def test_triage_refuses_to_ship_files_of_a_recorded_folder(
        capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(DUMP), "--recorded", str(DUMP / "io"), "--dask-workers", "1",
                   "--ship-files"])
    assert status == 2
    assert "must be on a filesystem the workers share" in \
        capsys.readouterr().err


def test_a_named_folder_replaces_the_recording_found_in_the_dump(tmp_path: Path) -> None:
    """The dump's own io/ is found without a flag; `--recorded` elsewhere is what the user
    chose, and the two would share execution ids."""
    from workbench.index import scan
    from workbench.replay.recorded_io import attach_recorded

    dump = scan(DUMP)
    assert [e.file for e in dump.find_module("jit_f").executions] == ["io/inputs/f.arg0.npy"]
    shutil.copytree(DUMP / "io", tmp_path / "io")
    assert attach_recorded(dump, tmp_path / "io") == 1
    assert [e.file for e in dump.find_module("jit_f").executions] == [
        str((tmp_path / "io" / "inputs" / "f.arg0.npy").resolve())]


def test_triage_finds_the_io_folder_without_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(DUMP), "-j", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [(r["execution"], r["status"]) for r in report["results"]] == [("recorded f", "ok")]
    assert status == 0


def test_a_recordings_fit_is_read_from_the_headers(tmp_path: Path) -> None:
    """`recording_fit` says, before any array is read, which parameter a recorded call's files
    do not fit (that one first) and the types on both sides; a fitting recording fits."""
    from workbench.index import scan
    from workbench.replay.backends import open_backend
    from workbench.replay.recorded_io import attach_recorded, recording_fit

    recorded = tmp_path / "io"
    shutil.copytree(DUMP / "io", recorded)
    dump = scan(DUMP)
    attach_recorded(dump, recorded)
    module = next(m for m in dump.modules if m.executions)
    specs = open_backend(dump.root, module).parameter_specs()
    assert specs is not None
    fit = recording_fit(dump.root, module.executions[0], specs)
    assert fit.ok and fit.recorded == ["f32[64,64]", "f32[64,8]"]
    np.save(recorded / "inputs" / "f.arg1.npy", np.zeros((8, 64), np.float32))
    fit = recording_fit(dump.root, module.executions[0], specs)
    assert not fit.ok
    assert fit.misfits == ["parameter 1: the module takes f32[64,8], f.arg1.npy holds "
                           "f32[8,64]"]
    assert fit.fits == ["parameter 0: f32[64,64]"]
    (recorded / "inputs" / "f.arg1.npy").unlink()
    fit = recording_fit(dump.root, module.executions[0], specs)
    assert fit.misfits[0].startswith("1 .argK.npy files; the entry takes 2 parameters")

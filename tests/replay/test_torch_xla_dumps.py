"""PyTorch/XLA 2.9 dumps (tests/data/producers/torch_xla, made by its make.py): names as
torch_xla writes them, every step evaluated (the batch-norm family included) and planted
miscompiles named, with torch_xla's op_name and source metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, run_json
from tests.helpers.planting import plant
from workbench.index import scan

DATA = Path(__file__).resolve().parents[1] / "data" / "producers" / "torch_xla"
MLP = DATA / "mlp_sgd"
CONV = DATA / "conv_batchnorm_sgd"


def test_graph_ids_of_four_digits_are_part_of_the_module_name(tmp_path: Path) -> None:
    """The file names of the whole bf16 encoder dump (graph ids 1167 and 1074, a pipeline
    named after_layout_assignment), as empty files: two modules, no phantom, no gap."""
    for name in (DATA / "encoder_bf16_adamw.files").read_text().split():
        (tmp_path / name).touch()
    dump = scan(tmp_path)
    assert [(m.key, m.name) for m in dump.modules] == [
        ("module_0000", "SyncTensorsGraph.1167"), ("module_0004", "SyncTensorsGraph.1074")]
    assert dump.problems == []
    for module in dump.modules:
        numbers = [step.xla_step for step in module.steps if step.xla_step is not None]
        assert numbers == list(range(79))


@pytest.mark.parametrize("folder", [MLP, CONV])
def test_ls_check_finds_no_problem(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "ls", "--check", folder)
    assert status == 0, out
    assert out.rstrip().splitlines()[-1].endswith(", 0 other files, 0 problems"), out
    assert "SyncTensorsGraph." in out


@pytest.mark.parametrize("folder", [MLP, CONV])
def test_every_step_evaluates_ok_on_fake_data(folder: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "triage", folder, "--fake-data", "--seed", "1",
                               "--linear", "--no-cache", "--jobs", "0", "--json")
    (result,) = payload["results"]
    assert (status, result["status"]) == (0, "ok"), result["detail"]
    assert result["evaluations"] == result["steps"] > 30


def test_a_planted_batch_norm_bug_is_named_with_torch_metadata(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """rsqrt -> sqrt in the expanded batch norm from XLA step 0012 on: bisect names 0012, and
    the culprit instruction carries torch_xla's op_name and source line."""
    root = tmp_path / "planted"
    plant(CONV, root, "module_0000.SyncTensorsGraph.245", 12, "rsqrt", "sqrt")
    status, payload = run_json(capsys, "triage", root, "--fake-data", "--seed", "1",
                               "--localize", "--no-cache", "--jobs", "0", "--json")
    (result,) = payload["results"]
    assert (status, result["status"]) == (1, "mismatch")
    culprit = result["culprit"]
    assert (culprit["xla_step"], culprit["pass"]) == (12, "reshape-mover")
    instruction = culprit["instruction"]
    assert (instruction["opcode"], instruction["op_name"]) == ("sqrt", "aten__native_batch_norm")
    assert instruction["source"].endswith("torch/nn/functional.py:2813")


def test_a_planted_mlp_bug_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "planted"
    plant(MLP, root, "module_0000.SyncTensorsGraph.174", 10, "exponential",
          "exponential-minus-one")
    status, payload = run_json(capsys, "triage", root, "--fake-data", "--localize",
                               "--no-cache", "--jobs", "0", "--json")
    (result,) = payload["results"]
    assert (status, result["status"], result["culprit"]["xla_step"]) == (1, "mismatch", 10)
    assert result["culprit"]["instruction"]["op_name"].startswith("aten__")

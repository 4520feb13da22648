"""`workbench.record.torch_xla` on a real PyTorch/XLA run on the CPU client (which writes no
snapshot): each step's graph arguments land in the dump's `io/` under the graph's module name
(a step that reuses a compiled graph under its first name), triage judges the step ok and
names a planted miscompile.

Needs torch and torch_xla: in this Python, or in the one `WORKBENCH_TORCH_XLA_PYTHON` names
(the program runs there; the workbench reads the dump here). Skipped without either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.helpers.planting import plant
from workbench.cli import main
from workbench.index import scan

ROOT = Path(__file__).resolve().parents[2]
TORCH_PYTHON = os.environ.get("WORKBENCH_TORCH_XLA_PYTHON") or (
    sys.executable if find_spec("torch_xla") is not None else None)
pytestmark = [pytest.mark.torch_xla, pytest.mark.skipif(
    TORCH_PYTHON is None,
    reason="needs torch_xla: install torch and torch_xla, or set WORKBENCH_TORCH_XLA_PYTHON")]

PROGRAM = textwrap.dedent("""
    import torch, torch_xla
    from workbench.record.torch_xla import record_sync

    torch.manual_seed(0)
    device = torch_xla.device()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 8).to(device)
    torch_xla.sync()
    for _ in range(2):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
        record_sync()
""")


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("torch_xla") / "dump"
    program = folder.parent / "program.py"
    program.write_text(PROGRAM)
    assert TORCH_PYTHON is not None
    env = dict(os.environ, PJRT_DEVICE="CPU", PYTHONPATH=str(ROOT),
               XLA_FLAGS=f"--xla_dump_to={folder} --xla_dump_hlo_pass_re=.* "
                         "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto")
    subprocess.run([TORCH_PYTHON, str(program)], env=env, check=True, timeout=600)
    return folder


def recorded_module(dump: Path) -> str:
    [module] = [m for m in scan(dump).modules if m.executions]
    assert module.name.startswith("SyncTensorsGraph.")
    return f"{module.id}.{module.name}"


def test_the_step_is_found_under_its_graphs_name(dump: Path) -> None:
    found = scan(dump)
    assert not list(dump.glob("*snapshot*")) and found.problems == []
    recorded_module(dump)
    manifest = json.loads((dump / "io" / "recording.json").read_text())
    # The second step reuses the first one's graph: the same module, past the first call.
    assert [c["module"] for c in manifest["calls"]] == [manifest["calls"][0]["module"]]
    assert "calls past the first 1 of each executable" in {
        s["reason"] for s in manifest["skipped"]}


def test_triage_judges_the_step_ok(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(dump), "-j", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in report["results"]] == ["ok"], report
    assert status == 0


def test_a_planted_copy_is_named(dump: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    name = recorded_module(dump)
    module = scan(dump).find_module(name.partition(".")[0])
    fusion = next(s for s in module.steps if s.pass_name == "fusion" and s.xla_step is not None)
    broken = tmp_path / "broken"
    plant(dump, broken, name, fusion.xla_step or 0, "tanh", "exponential")
    status = main(["triage", str(broken), "-j", "0", "--json"])
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert status == 1 and result["status"] == "mismatch"
    assert (result["culprit"]["xla_step"], result["culprit"]["pass"]) == (
        fusion.xla_step, "fusion")

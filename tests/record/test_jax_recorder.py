"""`workbench.record.jax` on a real JAX run on the CPU without `--xla_dump_hlo_snapshots`: the
recording lands in the dump's `io/`, each call finds its module (two compilations of one
function told apart by fingerprint), triage judges them ok and names a planted miscompile.

Needs JAX (the `jax` extra): in this Python, or in the one `WORKBENCH_JAX_PYTHON` names (the
program runs there; the workbench reads the dump here). Skipped without either.
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
JAX_PYTHON = os.environ.get("WORKBENCH_JAX_PYTHON") or (
    sys.executable if find_spec("jax") is not None else None)
pytestmark = [pytest.mark.jax, pytest.mark.skipif(
    JAX_PYTHON is None, reason="needs JAX: pip install '.[jax]', or set WORKBENCH_JAX_PYTHON")]

PROGRAM = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np
    from workbench.record.jax import record

    @record
    def f(x, w, unused):
        m = x - x.mean(axis=-1, keepdims=True)
        return jnp.tanh(m * jax.lax.rsqrt((m * m).mean(axis=-1, keepdims=True) + 1e-5)) @ w

    def scaled(x, k):
        return x * k

    scaled = record(jax.jit(scaled, static_argnums=1), max_bytes=1 << 20)
    rng = np.random.default_rng(0)
    for rows in (4, 6):  # two shapes: two modules jit_f
        x = rng.standard_normal((rows, 16), dtype=np.float32)
        f(x, rng.standard_normal((16, 8), dtype=np.float32), x).block_until_ready()
    scaled(np.ones(3, np.float32), 2.0).block_until_ready()
""")


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("jax") / "dump"
    program = folder.parent / "program.py"
    program.write_text(PROGRAM)
    assert JAX_PYTHON is not None
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT),
               XLA_FLAGS=f"--xla_dump_to={folder} --xla_dump_hlo_pass_re=.* "
                         "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto")
    subprocess.run([JAX_PYTHON, str(program)], env=env, check=True, timeout=600)
    return folder


def test_the_calls_are_found_in_the_dump(dump: Path) -> None:
    assert not list(dump.glob("*snapshot*"))
    found = scan(dump)
    modules = [m for m in found.modules if m.name == "jit_f"]
    assert len(modules) == 2
    assert sorted(e.id for m in modules for e in m.executions) == [
        "recorded jit_f.0", "recorded jit_f.1"]
    assert [len(m.executions) for m in modules] == [1, 1]
    manifest = json.loads((dump / "io" / "recording.json").read_text())
    assert [c["arguments"] for c in manifest["calls"]] == [2, 2]  # `unused` is no parameter
    assert [s["module"] for s in manifest["skipped"]] == ["jit_scaled"]
    assert "static arguments" in manifest["skipped"][0]["reason"]


def test_triage_judges_every_recorded_call_ok(dump: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(dump), "-j", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    recorded = [r for r in report["results"] if r["execution"].startswith("recorded ")]
    assert [r["status"] for r in recorded] == ["ok", "ok"], report
    assert report["unjudged"] == 0 and status == 0


def test_a_planted_copy_is_named(dump: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    module = next(m for m in scan(dump).modules if m.name == "jit_f" and m.executions)
    steps = [s for s in module.steps if s.xla_step is not None and s.pass_name == "fusion"]
    broken = tmp_path / "broken"
    plant(dump, broken, f"{module.id}.{module.name}", steps[0].xla_step or 0, "rsqrt", "sqrt")
    status = main(["triage", str(broken), "-j", "0", "--json"])
    results = json.loads(capsys.readouterr().out)["results"]
    failing = [r for r in results if r["status"] == "mismatch"]
    assert status == 1
    assert [(r["module"], r["culprit"]["pass"]) for r in failing] == [(module.key, "fusion")]

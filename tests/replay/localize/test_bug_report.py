"""`reduce`'s bug report for XLA's tools (`OUT/bug-report/`, `--archive`): HLO text the
project's reader (and XLA's, where JAX is installed) parses, the inputs as
`run_hlo_module --input_literals_file` and numpy read them, the commands, and what was
observed against what was expected."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from workbench.cli import main
from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.literal import literal_from_proto
from workbench.protos import run_hlo_module_pb2
from workbench.replay.reduce.bundle import _numpy_inputs
from workbench.replay.reduce.xla_check import load_inputs

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "layernorm-broken-fusion"


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("reduce") / "reduced"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = main(["reduce", str(EXAMPLE), "module_0010", "--out", str(out), "--archive",
                       "--json"])
    assert status == 0
    return out, json.loads(stdout.getvalue())


def test_the_bundle_holds_runnable_hlo_inputs_and_commands(reduced: tuple[Path, dict]) -> None:
    out, payload = reduced
    bundle = out / "bug-report"
    assert payload["bug_report"] == str(bundle)
    assert sorted(p.name for p in bundle.iterdir()) == [
        "README.md", "after.hlo", "before.hlo", "debug_options.txt", "inputs.npz",
        "inputs.pb", "run_with_jax.py"]
    # The reduced pair, read by the project's own HLO reader: rsqrt before, sqrt after.
    before = parse_hlo_text((bundle / "before.hlo").read_text(), "before.hlo")
    after = parse_hlo_text((bundle / "after.hlo").read_text(), "after.hlo")
    before_ops, after_ops = ({i.opcode for c in module.computations for i in c.instructions}
                             for module in (before, after))
    assert "rsqrt" in before_ops and "sqrt" not in before_ops
    assert "sqrt" in after_ops and "rsqrt" not in after_ops
    # The inputs as run_hlo_module reads them, equal to the numpy copy.
    literals = run_hlo_module_pb2.RunHloModuleLiterals.FromString(
        (bundle / "inputs.pb").read_bytes())
    (iteration,) = literals.iterations
    arguments, expected = load_inputs(bundle)
    assert len(iteration.arguments) == len(arguments) == 1
    np.testing.assert_array_equal(literal_from_proto(iteration.arguments[0]), arguments[0])
    assert expected is not None and expected.shape == (6,)
    # What was observed against what was expected, and the commands to see it.
    readme = (bundle / "README.md").read_text()
    assert "# Miscompile in pass `fusion`: `rsqrt.2` (sqrt) departs" in readme
    assert "from program.py:4" in readme
    # rsqrt against sqrt of the same operand: about 3.05 against 0.327
    assert re.search(r"\| \[0\] \| 3\.05\d* \| 0\.327\d* \|", readme)
    assert ("run_hlo_module --platform=CPU --reference_platform=interpreter --input_format=hlo "
            "--input_literals_file=inputs.pb --print_literals before.hlo after.hlo") in readme
    assert "hlo-opt --platform=cpu --passes=fusion before.hlo" in readme
    assert "- producer: JAX" in readme and "- platform: cpu" in readme
    assert "the dump records no JAX or XLA version number" in readme
    assert (bundle / "debug_options.txt").read_text() == (
        EXAMPLE / "module_0010.jit_ln.debug_options").read_text()
    # The archive holds the same files.
    with tarfile.open(out / "bug-report.tar.gz") as tar:
        assert sorted(tar.getnames()) == sorted(f"bug-report/{p.name}" for p in bundle.iterdir())
    # The reduced folder still reads back as the one module it was.
    assert main(["bisect", str(out), "jit_ln"]) == 1


def test_types_numpy_lacks_round_trip_through_the_numpy_inputs(tmp_path: Path) -> None:
    argument = np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16)
    expected = np.array([0.5, 1.0], dtype=np.float32)
    np.savez(tmp_path / "inputs.npz", **_numpy_inputs([argument], expected))
    arguments, loaded = load_inputs(tmp_path)
    assert arguments[0].dtype == ml_dtypes.bfloat16 and loaded is not None
    np.testing.assert_array_equal(arguments[0], argument)
    np.testing.assert_array_equal(loaded, expected)


def test_xla_cpu_shows_the_mismatch(reduced: tuple[Path, dict]) -> None:
    """Where JAX is installed (the jax extra): XLA compiles both files and runs them."""
    pytest.importorskip("jax")
    bundle = reduced[0] / "bug-report"
    run = subprocess.run([sys.executable, str(bundle / "run_with_jax.py")], cwd=bundle,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "6 of 6 elements differ" in run.stdout
    assert "after.hlo differs from before.hlo" in run.stdout
    assert "before.hlo against the expected value the workbench saved: 0 element(s)" in run.stdout

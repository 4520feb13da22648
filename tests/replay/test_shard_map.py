"""shard_map under Shardy (JAX 0.12's default), a real dump on 4 CPU devices
(tests/data/producers/shard_map, `program.py` beside it): the `xla.sdy.*` custom-calls of the
steps before the partitioner, evaluated by what they mean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_cli, run_json
from tests.helpers.hlo_builders import run
from workbench.hlo_ir import Shape

DUMP = Path(__file__).resolve().parents[1] / "data" / "producers" / "shard_map"


def test_the_sdy_wrappers_are_in_the_steps_before_the_partitioner() -> None:
    """What the test stands on: the reference holds Shardy's wrappers with several operands."""
    text = next(DUMP.glob("*.before_optimizations.txt")).read_text()
    assert 'custom_call_target="xla.sdy.GlobalToLocalShape"' in text
    assert 'custom_call_target="xla.sdy.LocalToGlobalShape"' in text
    assert "(f32[2,4]{1,0}, f32[4,3]{1,0}) custom-call(" in text


def test_every_step_evaluates_ok(capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "triage", DUMP, "--fake-data", "--linear", "--no-cache",
                               "--jobs", "0", "--json")
    (result,) = payload["results"]
    assert (status, result["status"]) == (0, "ok"), result["detail"]
    assert result["evaluations"] == result["steps"] >= 30


def test_the_reference_computes_what_the_program_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each of the 4 devices runs the body on its 2 rows of `a`; psum adds their sums; the
    second result joins the devices' `2 * a` blocks: the global program's answer."""
    a = (np.arange(32.0).reshape(8, 4) / 32).astype(np.float32)
    w = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "w.npy", w)
    out = tmp_path / "literals"
    replayed = run_cli(capsys, "replay", DUMP, "jit_f", "--inputs", tmp_path / "a.npy",
                       tmp_path / "w.npy", "--dump-literals", out)
    assert replayed.status == 0, replayed.out + replayed.err
    assert "31 ok, 0 mismatch, 0 unsupported, 0 error" in replayed.out
    sums = np.tanh(a.astype(np.float64) @ w.astype(np.float64)).sum(axis=0)
    np.testing.assert_allclose(np.load(out / "expected.0.npy"), sums, rtol=1e-5)
    np.testing.assert_array_equal(np.load(out / "expected.1.npy"), 2 * a)


def test_a_sharding_group_has_no_result_and_a_barrier_is_the_identity() -> None:
    x = np.arange(3, dtype=np.float32)
    assert run("custom-call", Shape("tuple", tuple_shapes=()), x,
               custom_call_target="xla.sdy.ShardingGroup") == ()
    np.testing.assert_array_equal(
        run("custom-call", "f32", x, custom_call_target="xla.sdy.PropagationBarrier"), x)

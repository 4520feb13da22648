"""XLA CPU reads and writes subnormals as zero (denormals-are-zero, flush-to-zero): a recording
made so is a legal outcome, judged ok and said to be decided by it, never a mismatch; a
difference it does not explain is still one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from workbench.cli import main
from workbench.protos import hlo_pb2
from workbench.replay.hlo.float_environment import either_way, flush_subnormals

DATA = Path(__file__).parent.parent / "data" / "subnormal-lgamma"
SNAPSHOT = "module_0002.jit_lgamma.snapshot.1271608276.pb"


def bisect_json(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    status = main(["bisect", str(root), "jit_lgamma", "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, json.loads(out)


def test_lgamma_of_the_smallest_subnormal_recorded_as_inf_is_ok_and_says_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, verdict = bisect_json(DATA, capsys)
    assert status == 0 and verdict["status"] == "ok", verdict["detail"]
    assert verdict["recorded"]["ok"]
    detail = verdict["detail"]
    assert "the platform's floating-point environment decided it: 1 element(s)" in detail
    assert "first at [0] (reference 744.48" in detail and "recorded inf" in detail
    assert "as XLA CPU runs (denormals-are-zero, flush-to-zero)" in detail


def test_a_difference_flushing_does_not_explain_is_still_a_mismatch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same recording with its lgamma(1.0) = 0 changed to 1.0: the flushed reference
    gives 0 there too, so the element stays a mismatch."""
    root = tmp_path / "dump"
    shutil.copytree(DATA, root)
    snapshot = hlo_pb2.HloSnapshot.FromString((root / SNAPSHOT).read_bytes())
    assert np.isinf(snapshot.result.f64s[0]) and snapshot.result.f64s[1] == 0
    snapshot.result.f64s[1] = 1.0
    (root / SNAPSHOT).write_bytes(snapshot.SerializeToString())
    status, verdict = bisect_json(root, capsys)
    assert status == 1 and verdict["status"] == "mismatch"
    assert not verdict["recorded"]["ok"] and "floating-point environment" not in verdict["detail"]


def test_flushing_zeroes_subnormals_of_every_float_type_keeping_the_sign() -> None:
    for dtype in (np.float64, np.float32, np.float16, ml_dtypes.bfloat16):
        tiny = ml_dtypes.finfo(dtype).smallest_subnormal
        values = np.array([tiny, -tiny, 1, 0], dtype)
        flushed = np.asarray(flush_subnormals(values))
        assert flushed.dtype == values.dtype
        assert flushed.astype(np.float64).tolist() == [0, 0, 1, 0]
        assert np.signbit(flushed.astype(np.float64)).tolist() == [False, True, False, False]
    integers = np.array([1, 2], np.int32)
    assert flush_subnormals(integers) is integers


def test_each_element_may_be_either_way_but_only_where_the_recording_is_nearer() -> None:
    reference = np.array([744.5, 0.0, 2.0])
    flushed = np.array([np.inf, 0.0, 3.0])
    recorded = np.array([np.inf, 0.0, 2.0000001])
    mixed = either_way(reference, flushed, recorded)
    assert mixed is not None
    expected, note = mixed
    assert expected.tolist() == [np.inf, 0.0, 2.0]  # the third is nearer the reference
    assert note.startswith("1 element(s)") and "first at [0]" in note
    assert either_way(reference, flushed, reference.copy()) is None

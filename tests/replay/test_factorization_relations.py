"""A recorded factorization that is legal but not the reference's is judged by its relations.

The data (`tests/data/factorizations/schur_f32_reordered`, its README says how it was made)
is a real JAX 0.12 dump of `jax.scipy.linalg.schur` (LAPACK `sgees`) whose recorded Schur
form was reordered by LAPACK's `strexc`: the same eigenvalues in another order on the
diagonal, a legal Schur form of the same matrix, far from the reference element by element.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from workbench.formats.literal import literal_from_proto, shape_from_proto
from workbench.formats.literal_write import literal_to_proto
from workbench.index import scan
from workbench.protos import hlo_pb2
from workbench.replay.bisect import bisect_replay
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import open_replay

SCHUR = Path(__file__).parents[1] / "data" / "factorizations" / "schur_f32_reordered"


def _verdict(root: Path) -> tuple[bool, str, Kind]:
    (module,) = [m for m in scan(root).modules if m.executions]
    with open_replay(root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay, linear=True)
        recorded = replay.recorded_comparison
    assert recorded is not None
    return recorded.ok, verdict.detail, verdict.status


def _planted(tmp_path: Path, row: int, column: int, change: float) -> Path:
    """The data with the recorded T changed at [row, column]."""
    target = tmp_path / "planted"
    shutil.copytree(SCHUR, target)
    (snapshot_file,) = target.glob("*.snapshot.*.pb")
    snapshot = hlo_pb2.HloSnapshot.FromString(snapshot_file.read_bytes())
    t, z = literal_from_proto(snapshot.result)
    t = np.array(t)
    t[row, column] += np.float32(change)
    snapshot.result.CopyFrom(literal_to_proto((t, z), shape_from_proto(snapshot.result.shape)))
    snapshot_file.write_bytes(snapshot.SerializeToString())
    return target


def test_a_reordered_schur_form_is_a_legal_recording() -> None:
    ok, detail, status = _verdict(SCHUR)
    assert ok and status == Kind.OK, detail
    assert "a different, legal Schur form: A = Z T Z^H within |A - Z T Z^H|" in detail
    assert "eigenvalues (as a multiset) off the reference's" in detail
    # the steps are still compared element by element with each other: every one is ok
    assert "no step differs from the reference (checked every step)" in detail


def test_a_planted_change_to_the_schur_form_is_still_a_mismatch(tmp_path: Path) -> None:
    """Above the diagonal (the relation A = Z T Z^H breaks) and on it (the eigenvalues)."""
    for row, column, change in ((0, 3, 0.01), (2, 2, 0.001)):
        ok, detail, status = _verdict(_planted(tmp_path / f"{row}{column}", row, column,
                                               change))
        assert not ok and status == Kind.MISMATCH, detail
        assert "the recorded result differs from the reference" in detail
        assert "not a legal Schur form either: |A - Z T Z^H|" in detail

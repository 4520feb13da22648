"""A recorded factorization that is legal but not the reference's is judged by its relations.

The data (`tests/data/factorizations/`, each README says how it was made) are real JAX 0.12
dumps of `jax.scipy.linalg.schur` (LAPACK `sgees`, `cgees`) and `jnp.linalg.eig` (`sgeev`)
whose recorded results were changed into another legal factorization of the same matrix:
the Schur forms reordered by LAPACK's `strexc`/`ctrexc` (the same eigenvalues in another
order on the diagonal), the eigenpairs put in another order with their vectors' phases
changed; `jnp.linalg.eigh` (`ssyevd`) with a repeated eigenvalue's vectors rotated, and
`jnp.linalg.qr` (`sgeqrf`, `sorgqr`) with signs changed or another Householder form. Element
by element each is far from the reference, though right.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.formats.literal import literal_from_proto, shape_from_proto
from workbench.formats.literal_write import literal_to_proto
from workbench.index import scan
from workbench.loader import load_step_hlo
from workbench.protos import hlo_pb2
from workbench.replay.bisect import bisect_replay
from workbench.replay.judge.factorization_outputs import factorizations
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import open_replay

DATA = Path(__file__).parents[1] / "data" / "factorizations"
SCHUR_F32 = DATA / "schur_f32_reordered"
SCHUR_C64 = DATA / "schur_c64_reordered"
EIG_F32 = DATA / "eig_f32_permuted"
MOVED = DATA / "moved_outputs"
SVD_F32 = DATA / "svd_f32_rotated"
EIGH_QR = DATA / "eigh_qr"
EIGH_QR_C64 = DATA / "eigh_qr_c64"


def _verdict(root: Path, name: str | None = None) -> tuple[bool, str, Kind]:
    (module,) = [m for m in scan(root).modules
                 if m.executions and (name is None or m.name == name)]
    with open_replay(root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay, linear=True)
        recorded = replay.recorded_comparison
    assert recorded is not None
    return recorded.ok, verdict.detail, verdict.status


def _planted(source: Path, target: Path, output: int, index: tuple[int, ...],
             change: complex, name: str = "") -> Path:
    """The data with the recorded output `output` changed by `change` at `index` (in the
    snapshot of the module named `name`, when there are several)."""
    shutil.copytree(source, target)
    (snapshot_file,) = target.glob(f"*{name}.snapshot.*.pb")
    snapshot = hlo_pb2.HloSnapshot.FromString(snapshot_file.read_bytes())
    outputs = [np.array(part) for part in literal_from_proto(snapshot.result)]
    outputs[output][index] += change if outputs[output].dtype.kind == "c" else change.real
    snapshot.result.CopyFrom(literal_to_proto(tuple(outputs),
                                              shape_from_proto(snapshot.result.shape)))
    snapshot_file.write_bytes(snapshot.SerializeToString())
    return target


@pytest.mark.parametrize(("root", "words"), [
    (SCHUR_F32, "a different, legal Schur form: A = Z T Z^H within |A - Z T Z^H|"),
    (SCHUR_C64, "a different, legal Schur form: A = Z T Z^H within |A - Z T Z^H|"),
    (EIG_F32, "a different, legal eigen-decomposition: A V = V W within |A V - V W| / |V|"),
])
def test_another_legal_factorization_is_a_legal_recording(root: Path, words: str) -> None:
    ok, detail, status = _verdict(root)
    assert ok and status == Kind.OK, detail
    assert "{0}, {1} judged by the" in detail and words in detail
    assert "eigenvalues (as a multiset) off the reference's" in detail
    # the steps are still compared element by element with each other: every one is ok
    assert "no step differs from the reference (checked every step)" in detail


def test_another_legal_svd_is_a_legal_recording() -> None:
    """Singular vectors with other signs, and another basis for two nearly equal singular
    values; the singular values themselves stay compared element by element."""
    ok, detail, status = _verdict(SVD_F32)
    assert ok and status == Kind.OK, detail
    assert ("{0}, {2} judged by the singular value decomposition's relations (svd.22, float32 "
            "6x4), a different, legal singular value decomposition: A = U S V^H within "
            "|A - U S V^H|") in detail


def test_outputs_moved_by_the_program_are_moved_back_before_judging() -> None:
    """A Schur form of `x.T` returned as `t.T` and `z.reshape(2, 3, 6)`; eigenvalues alone
    (no vectors), returned from a `call` beside another output judged element by element."""
    ok, detail, _ = _verdict(MOVED, "jit_moved_schur")
    assert ok, detail
    assert "{0}, {1} judged by the Schur form's relations" in detail
    assert "a different, legal Schur form: A = Z T Z^H within" in detail
    ok, detail, _ = _verdict(MOVED, "jit_eigenvalues")
    assert ok, detail
    assert "{0} judged as A's eigenvalues" in detail
    assert "a different, legal order of the eigenvalues: the same multiset within" in detail
    assert "eigenvalues' backward error" in detail
    ok, detail, _ = _verdict(MOVED, "jit_eigvals")  # the result is not a tuple
    assert ok, detail
    assert "a different, legal order of the eigenvalues" in detail


def test_a_changed_singular_value_is_a_mismatch(tmp_path: Path) -> None:
    """The singular values are compared element by element, and with the recorded vectors
    they no longer make A."""
    root = _planted(SVD_F32, tmp_path / "planted", 1, (3,), 0.001)
    ok, detail, _ = _verdict(root)
    assert not ok
    assert "first at {1}[3]" in detail
    assert "not a legal singular value decomposition either: |A - U S V^H| 0.001 >" in detail


def test_the_outputs_beside_a_legal_factorization_are_still_compared(tmp_path: Path) -> None:
    """The sum returned beside the eigenvalues, changed: a mismatch there, the eigenvalues
    still judged legal by their relations."""
    root = _planted(MOVED, tmp_path / "planted", 1, (), 0.5, "jit_eigenvalues")
    ok, detail, _ = _verdict(root, "jit_eigenvalues")
    assert not ok
    assert "first at {1}" in detail
    assert "a different, legal order of the eigenvalues" in detail


@pytest.mark.parametrize(("root", "output", "index", "change", "words"), [
    (SCHUR_F32, 0, (0, 3), 0.01, "not a legal Schur form either: |A - Z T Z^H|"),  # above
    (SCHUR_F32, 0, (2, 2), 0.001, "not a legal Schur form either: |A - Z T Z^H|"),  # on
    (SCHUR_C64, 0, (1, 3), 0.01j, "not a legal Schur form either: |A - Z T Z^H|"),
    (EIG_F32, 0, (3,), 0.001, "not a legal eigen-decomposition either:"),  # an eigenvalue
    (EIG_F32, 1, (2, 1), 0.01, "not a legal eigen-decomposition either:"),  # a vector
    (MOVED, 0, (0,), 0.1, "not a legal order of the eigenvalues either:"),  # eigvals alone
    (SVD_F32, 2, (1, 2), 0.01, "not a legal singular value decomposition either:"),  # V^T
    (SVD_F32, 0, (4, 1), 0.01, "not a legal singular value decomposition either:"),  # U
])
def test_a_planted_change_to_a_factorization_is_still_a_mismatch(
        tmp_path: Path, root: Path, output: int, index: tuple[int, ...], change: complex,
        words: str) -> None:
    name = "jit_eigenvalues" if root == MOVED else None
    planted = _planted(root, tmp_path / "planted", output, index, change, name or "")
    ok, detail, status = _verdict(planted, name)
    assert not ok and status == Kind.MISMATCH, detail
    assert "the recorded result differs from the reference" in detail
    assert words in detail


def test_the_outputs_are_traced_to_the_lapack_call_and_its_matrix_to_the_input() -> None:
    """Through JAX's `call`, `select(info == 0, x, NaN)` and (eig) `complex(wr, wi)`."""
    for root, routine, keys in ((SCHUR_F32, "gees", {"t", "z"}),
                                (EIG_F32, "geev", {"values", "vr"})):
        (module,) = [m for m in scan(root).modules if m.executions]
        (found,) = factorizations(load_step_hlo(root, module.ir_steps("hlo")[0]))
        assert found.routine == routine and found.parameter == 0
        assert set(found.outputs) == keys
        assert sorted(path for path, _ in found.outputs.values()) == [(0,), (1,)]


@pytest.mark.parametrize(("root", "name", "words"), [
    (EIGH_QR, "jit_eigh", "{1} judged by the Hermitian eigen-decomposition's relations (eigh.17, "
                          "float32 6x6), a different, legal Hermitian eigen-decomposition: "
                          "A V = V W within |A V - V W|"),
    (EIGH_QR, "jit_qr", "{0}, {1} judged by the QR factorization's relations (geqrf.3, float32 "
                        "6x4), a different, legal QR factorization: A = Q R within |A - Q R|"),
    (EIGH_QR, "jit__lambda", "{0}, {1} judged by the QR factorization's relations (geqrf.3, "
                             "float32 6x4), a different, legal QR factorization: A = Q R "
                             "within |A - Q R|"),
    (EIGH_QR_C64, "jit_eigh", "{1} judged by the Hermitian eigen-decomposition's relations "
                              "(eigh.15, complex64 5x5), a different, legal Hermitian "
                              "eigen-decomposition: A V = V W within |A V - V W|"),
    (EIGH_QR_C64, "jit_qr", "{0}, {1} judged by the QR factorization's relations (geqrf.3, "
                            "complex64 3x5), a different, legal QR factorization: A = Q R "
                            "within |A - Q R|"),
])
def test_another_legal_eigh_or_qr_is_a_legal_recording(root: Path, name: str,
                                                        words: str) -> None:
    """A repeated eigenvalue's vectors rotated in their subspace, signs (phases) of vectors,
    of Q's columns and R's rows, and another Householder form (LAPACK's `sgeqrfp`): each
    legal, each far from the reference element by element."""
    ok, detail, status = _verdict(root, name)
    assert ok and status == Kind.OK, detail
    assert words in detail
    assert "no step differs from the reference (checked every step)" in detail


def test_eigh_and_qr_outputs_are_traced_to_their_calls_and_matrices() -> None:
    """eigh's matrix is computed in the module (JAX symmetrizes it); Q is `orgqr`'s output,
    judged with the `geqrf` it reads, R the upper triangle of `geqrf`'s packed output; the
    raw Householder form is returned transposed."""
    found = {}
    for module in scan(EIGH_QR).modules:
        if module.executions:
            first = load_step_hlo(EIGH_QR, module.ir_steps("hlo")[0])
            (found[module.name],) = factorizations(first)
    eigh, qr, raw = found["jit_eigh"], found["jit_qr"], found["jit__lambda"]
    assert (eigh.routine, eigh.parameter, set(eigh.outputs)) == ("syevd", None, {"v", "w"})
    assert (qr.routine, qr.parameter, set(qr.outputs)) == ("geqrf", 0, {"q", "r"})
    assert (raw.routine, raw.parameter, set(raw.outputs)) == ("geqrf", 0, {"a", "tau"})
    assert raw.outputs["a"][1] == [("transpose", (1, 0), (6, 4))]


@pytest.mark.parametrize(("name", "output", "index", "change", "words"), [
    ("jit_eigh", 1, (2, 3), 0.01, "not a legal Hermitian eigen-decomposition either: "
                                  "|A V - V W|"),  # a vector
    ("jit_qr", 0, (4, 1), 0.01, "not a legal QR factorization either: |A - Q R|"),  # Q
    ("jit_qr", 1, (1, 3), 0.01, "not a legal QR factorization either: |A - Q R|"),  # R
    ("jit_qr", 1, (2, 0), 0.01, "|R below its diagonal| 0.01 >"),  # R not triangular
    ("jit__lambda", 1, (2,), 0.01, "not a legal QR factorization either:"),  # tau
    ("jit__lambda", 0, (1, 4), 0.01, "not a legal QR factorization either:"),  # a reflector
    ("c64 jit_eigh", 1, (3, 1), 0.01j, "not a legal Hermitian eigen-decomposition either:"),
    ("c64 jit_qr", 1, (1, 4), 0.01j, "not a legal QR factorization either: |A - Q R|"),
])
def test_a_planted_change_to_an_eigh_or_qr_is_still_a_mismatch(
        tmp_path: Path, name: str, output: int, index: tuple[int, ...], change: complex,
        words: str) -> None:
    root = EIGH_QR_C64 if name.startswith("c64 ") else EIGH_QR
    name = name.removeprefix("c64 ")
    planted = _planted(root, tmp_path / "planted", output, index, change, name)
    ok, detail, status = _verdict(planted, name)
    assert not ok and status == Kind.MISMATCH, detail
    assert "the recorded result differs from the reference" in detail
    assert words in detail


def test_a_changed_eigenvalue_of_eigh_is_a_mismatch(tmp_path: Path) -> None:
    """The eigenvalues, sorted and unique, are compared element by element; with the
    recorded vectors they no longer make A V = V W either."""
    planted = _planted(EIGH_QR, tmp_path / "planted", 0, (4,), 0.001, "jit_eigh")
    ok, detail, _ = _verdict(planted, "jit_eigh")
    assert not ok
    assert "first at {0}[4]" in detail
    assert "not a legal Hermitian eigen-decomposition either: |A V - V W|" in detail

"""`workbench replay`, `bisect` and `triage` on a dump of empty files named as XLA names them,
replayed by the scripted backend (the commands' plumbing; the real evaluator's results are
checked in tests/replay/test_corpus_replay.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from tests.helpers.replay_fakes import FAKE

FILES = [
    "module_0001.jit_fake.before_optimizations.txt",
    "module_0001.jit_fake.0000.p.after_good.before_bad.txt",
    "module_0001.jit_fake.0001.p.after_good.before_bad.txt",
    "module_0001.jit_fake.0002.p.after_bad.before_bad.txt",
    "module_0001.jit_fake.0003.p.after_bad.before_x.txt",
    "module_0001.jit_fake.snapshot.-1.pb",
    "module_0002.jit_two.before_optimizations.txt",
    "module_0002.jit_two.0000.p.after_good.before_x.txt",
    "module_0002.jit_two.snapshot.7.pb",
    "module_0003.jit_three.before_optimizations.txt",
    "module_0003.jit_three.0000.p.after_unsupported.before_x.txt",
    "module_0003.jit_three.snapshot.8.pb",
]


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    root = tmp_path / "dump"
    root.mkdir()
    for name in FILES:
        (root / name).touch()
    return root




def test_replay_prints_like_mlir_replay(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE)
    assert status == 1
    assert "Running IR after before_optimizations (step 0)." in out
    assert "Running IR after bad (step 3, XLA step 0002, pipeline p)." in out
    assert out.count("Results:") == 5
    assert "f32[4] [0., 2., 4., 6.]" in out
    assert "recorded result vs reference: mismatch: 4 of 4 elements differ" in out
    assert "mismatch: 4 of 4 elements differ beyond atol 1e-05, rtol 0.0001" in out
    assert "5 of 5 steps replayed: 3 ok, 2 mismatch, 0 unsupported, 0 error" in out
    assert "first mismatch: step 3 (0002 bad): module_0001.jit_fake.0002.p.after_bad" in out


def test_replay_print_changes_only_and_stop(dump: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                        "--print-changes-only")
    assert out.count("Results:") == 2  # the reference, then the first changed result
    _, out, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                        "--stop-after-first-failure")
    assert "Running IR after bad (step 4" not in out
    assert "4 of 5 steps replayed" in out


def test_replay_json_and_tolerance(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE, "--json")
    payload = json.loads(out)
    assert status == 1
    assert payload["execution"] == "snapshot.-1"
    assert [r["status"] for r in payload["results"]] == ["ok", "ok", "ok", "mismatch",
                                                         "mismatch"]
    assert payload["results"][3]["comparison"]["first_mismatch"]["index"] == [0]
    assert payload["recorded"]["ok"] is False
    status, out, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                             "--json", "--atol", "1.5")
    assert status == 0
    assert {r["status"] for r in json.loads(out)["results"]} == {"ok"}


def test_dump_literals(dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "literals"
    before = sorted(p.name for p in dump.iterdir())
    status, _, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                           "--dump-literals", out_dir)
    assert status == 1
    assert sorted(p.name for p in dump.iterdir()) == before
    manifest = json.loads((out_dir / "literals.json").read_text())["files"]
    assert {m["role"] for m in manifest} == {"input", "expected", "recorded", "actual"}
    np.testing.assert_array_equal(np.load(out_dir / "expected.npy"), [0, 2, 4, 6])
    np.testing.assert_array_equal(np.load(out_dir / "actual.step003.bad.npy"), [1, 3, 5, 7])
    assert (out_dir / "input.0.npy").exists()


@pytest.mark.parametrize("inside", [".", "sub/literals"])
def test_dump_literals_refuses_the_dump_folder(dump: Path, inside: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in dump.iterdir())
    status, _, err = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                             "--dump-literals", dump / inside)
    assert status == 2
    assert "inside the dump folder" in err and "never writes into a dump" in err
    assert sorted(p.name for p in dump.iterdir()) == before


def test_dump_literals_writes_into_a_folder_with_files_only_with_force(
        dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "literals"
    out_dir.mkdir()
    (out_dir / "notes.txt").write_text("mine")
    status, _, err = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                             "--dump-literals", out_dir)
    assert status == 2 and "not empty; add --force" in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["notes.txt"]
    status, _, _ = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                           "--dump-literals", out_dir, "--force")
    assert (out_dir / "literals.json").exists() and (out_dir / "notes.txt").read_text() == "mine"


def test_usage_errors(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "replay", dump, "module_0009", "--backend", FAKE)
    assert status == 2 and "no module 'module_0009'" in err
    status, _, err = run_cli(capsys, "replay", dump, "module_0001", "--backend", FAKE,
                             "--execution", "snapshot.9")
    assert status == 2 and "executions: snapshot.-1" in err
    status, _, err = run_cli(capsys, "bisect", dump / "missing", "module_0001")
    assert status == 2 and "no such file or folder" in err


def test_fake_data_and_npy_inputs(dump: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "replay", dump, "module_0002", "--backend", FAKE,
                             "--fake-data", "--json")
    payload = json.loads(out)
    assert status == 0 and payload["inputs"] == "fake data (seed 0)"
    assert payload["execution"] is None and payload["recorded"] is None
    good = tmp_path / "x.npy"
    np.save(good, np.ones(4, np.float32))
    status, out, _ = run_cli(capsys, "replay", dump, "module_0002", "--backend", FAKE,
                             "--inputs", good, "--json")
    assert status == 0 and json.loads(out)["inputs"] == "x.npy"
    bad = tmp_path / "y.npy"
    np.save(bad, np.ones(3, np.float64))
    status, _, err = run_cli(capsys, "replay", dump, "module_0002", "--backend", FAKE,
                             "--inputs", bad)
    assert status == 2 and "parameter 0 is f32[4], the file holds f64[3]" in err


def test_bisect(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "bisect", dump, "module_0001", "--backend", FAKE)
    assert status == 1
    assert "5 fake steps, at most 5 evaluations" in out
    assert "culprit: step 3 (0002 bad), pass bad: module_0001.jit_fake.0002.p.after_bad" in out
    status, out, _ = run_cli(capsys, "bisect", dump, "module_0001", "--backend", FAKE,
                             "--json", "--linear")
    payload = json.loads(out)
    assert payload["culprit"]["index"] == 3 and payload["evaluations"] == 5
    assert payload["status"] == "mismatch" and payload["linear"] is True
    status, out, _ = run_cli(capsys, "bisect", dump, "module_0002", "--backend", FAKE)
    assert status == 0 and "ok: no step differs from the reference" in out


def test_triage(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "triage", dump, "--backend", FAKE, "--jobs", "2")
    assert status == 1
    assert "3 execution(s): 1 mismatch, 0 error, 1 unsupported, 1 ok" in out
    assert "mismatch    module_0001 (jit_fake) snapshot.-1: culprit step 3, pass bad, " \
           "XLA step 0002" in out
    assert f"dig in: workbench replay {dump} module_0001 --execution snapshot.-1 " \
           "--print-changes-only" in out
    assert "unsupported module_0003 (jit_three) snapshot.8" in out
    status, out, _ = run_cli(capsys, "triage", dump, "--backend", FAKE, "--jobs", "0",
                             "--json")
    results = json.loads(out)["results"]
    assert status == 1
    assert [(r["module"], r["status"]) for r in results] == [
        ("module_0001", "mismatch"), ("module_0002", "ok"), ("module_0003", "unsupported")]
    assert results[0]["culprit"] == {"index": 3, "pass": "bad", "xla_step": 2,
                                     "file": "module_0001.jit_fake.0002.p.after_bad.before_bad"
                                             ".txt"}


def test_time_limit_runs_steps_in_a_worker(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "bisect", dump, "module_0001", "--backend", FAKE,
                             "--time-limit", "30", "--json")
    payload = json.loads(out)
    assert status == 1 and payload["culprit"]["index"] == 3


def test_triage_fake_data_for_modules_without_executions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "dump"
    root.mkdir()
    for name in ("module_0005.jit_five.before_optimizations.txt",
                 "module_0005.jit_five.0000.p.after_bad.before_x.txt"):
        (root / name).touch()
    status, out, _ = run_cli(capsys, "triage", root, "--backend", FAKE, "--jobs", "0", "--json")
    assert status == 5 and json.loads(out)["results"] == []  # nothing judged is no success
    status, out, _ = run_cli(capsys, "triage", root, "--backend", FAKE, "--jobs", "0",
                             "--fake-data")
    assert status == 1
    assert "mismatch    module_0005 (jit_five) fake data: culprit step 1, pass bad" in out
    assert f"dig in: workbench replay {root} module_0005 --fake-data" in out


def test_replay_names_the_file_it_judged(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The culprit step's proto damaged beside a good text: the replay judges the text, and
    says so, naming both files; the first mismatch names the file judged."""
    import shutil

    root = tmp_path / "dump"
    shutil.copytree(Path(__file__).parents[1] / "data" / "corpus" / "xla" /
                    "layernorm-broken-fusion", root)
    (proto,) = root.glob("module_0010.jit_ln.0028.*.hlo.pb")
    text = proto.name[: -len(".hlo.pb")] + ".txt"
    status, out, _ = run_cli(capsys, "replay", root, "module_0010")
    assert status == 1
    assert f"first mismatch: step 30 (0028 fusion): {proto.name}" in out
    assert "judged from its text" not in out
    proto.write_bytes(proto.read_bytes()[:500])
    status, out, _ = run_cli(capsys, "replay", root, "module_0010")
    assert status == 1
    assert f"step 30 (0028 fusion) judged from its text {text}: {proto.name}: not an HloProto" \
        in out
    assert f"first mismatch: step 30 (0028 fusion): {text}" in out

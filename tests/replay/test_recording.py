"""A recording found beside a dump without a flag: the calls `workbench.record.jax` recorded
from a real JAX run on the CPU without `--xla_dump_hlo_snapshots` (`tests/data/recorded`)
become the module's executions, are triaged ok, and a planted miscompile is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.planting import plant
from workbench.cli import main
from workbench.formats.recording import KIND, MANIFEST, read_recording
from workbench.index import scan
from workbench.record.writer import Executable, RecordingWriter

DUMP = Path(__file__).parents[1] / "data" / "recorded" / "jax_cpu"
MODULE = "module_0000.jit_ln"


def test_the_recording_is_the_modules_execution() -> None:
    dump = scan(DUMP)
    module = dump.find_module("jit_ln")
    assert [(e.id, e.file, e.kind) for e in module.executions] == [
        ("recorded jit_ln.0", "io/inputs/jit_ln.0.arg0.npy", KIND)]
    assert dump.others == [] and dump.problems == []


def test_triage_judges_the_recording_without_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["triage", str(DUMP), "-j", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [(r["execution"], r["status"]) for r in report["results"]] == [
        ("recorded jit_ln.0", "ok")]
    assert (report["judged"], report["unjudged"], report["not_triaged"]) == (1, 0, [])
    assert status == 0


def test_a_planted_copy_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    plant(DUMP, broken, MODULE, 30, "rsqrt", "sqrt")
    status = main(["triage", str(broken), "-j", "0", "--json"])
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert status == 1
    assert result["status"] == "mismatch"
    assert (result["culprit"]["xla_step"], result["culprit"]["pass"]) == (30, "fusion")


def test_a_module_of_the_same_name_is_told_apart_by_fingerprint(tmp_path: Path) -> None:
    """Two compilations of one function (other shapes, other static arguments) are two
    modules of one name: the call's fingerprint picks the one it ran."""
    copy = tmp_path / "dump"
    shutil.copytree(DUMP, copy)
    for path in copy.glob(f"{MODULE}.*"):
        if path.is_file():
            twin = copy / path.name.replace("module_0000", "module_0001")
            shutil.copy(path, twin)
    other = copy / "module_0001.jit_ln.cpu_after_optimizations.txt"
    other.write_text(other.read_text().replace("rsqrt", "sqrt"))
    dump = scan(copy)
    assert [len(dump.find_module(key).executions) for key in ("module_0000", "module_0001")] \
        == [1, 0]


def test_a_call_of_a_module_the_dump_lacks_is_a_problem(tmp_path: Path) -> None:
    copy = tmp_path / "dump"
    shutil.copytree(DUMP, copy)
    manifest = json.loads((copy / "io" / MANIFEST).read_text())
    manifest["calls"][0]["module"] = "jit_other"
    (copy / "io" / MANIFEST).write_text(json.dumps(manifest))
    dump = scan(copy)
    assert [(p.file, p.reason) for p in dump.problems] == [
        ("io/recording.json", "recorded call jit_ln.0 ran module jit_other, which this dump "
         "does not have")]
    assert dump.find_module("jit_ln").executions == []


def test_a_damaged_manifest_is_a_problem_naming_it(tmp_path: Path) -> None:
    copy = tmp_path / "dump"
    shutil.copytree(DUMP, copy)
    (copy / "io" / MANIFEST).write_text("{not json")
    dump = scan(copy)
    assert [p.file for p in dump.problems] == ["io/recording.json"]
    assert "not a recording manifest" in dump.problems[0].reason


def test_neither_snapshot_nor_recording_says_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing to judge is no success: exit 5, and each module says what to do."""
    copy = tmp_path / "dump"
    shutil.copytree(DUMP, copy, ignore=shutil.ignore_patterns("io"))
    status = main(["triage", str(copy), "-j", "0"])
    out = capsys.readouterr().out
    assert status == 5
    assert "module_0000 (jit_ln): no snapshot and no recording to replay: use --fake-data" in out
    assert "0 judged, 0 not judged" in out
    status = main(["triage", str(copy), "-j", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 5
    assert [entry["module"] for entry in report["not_triaged"]] == ["module_0000"]


def test_the_writer_skips_what_is_too_large_and_says_so(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, "test")
    executable = Executable("jit_f", None, None)
    small = [np.zeros(4, np.float32)]
    assert writer.wants(executable, calls=1) and writer.fits(executable, 32, max_bytes=100)
    assert writer.write(executable, small, small) == "jit_f.0"
    assert not writer.wants(executable, calls=1)  # past the first call
    assert not writer.fits(executable, 4000, max_bytes=100)
    assert writer.write(Executable("jit_g", None, None), [], small) is None
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert [(s["module"], s["reason"], s["count"]) for s in manifest["skipped"]] == [
        ("jit_f", "calls past the first 1 of each executable", 1),
        ("jit_f", "calls over 100 bytes of arguments and results (max_bytes)", 1),
        ("jit_g", "no arguments to record: replay it with --fake-data", 1)]
    recording = read_recording(tmp_path, "", [MANIFEST, "inputs/jit_f.0.arg0.npy"])
    assert [(c.name, c.module) for c in recording.calls] == [("jit_f.0", "jit_f")]
    assert len(recording.skipped) == 3


@pytest.mark.parametrize("command", ["replay", "bisect"])
def test_replay_without_snapshot_or_recording_says_how_to_record(
        tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "dump"
    shutil.copytree(DUMP, copy, ignore=shutil.ignore_patterns("io"))
    status = main([command, str(copy), "jit_ln"])
    assert status == 2
    assert "neither a snapshot nor a recording: use --fake-data" in capsys.readouterr().err

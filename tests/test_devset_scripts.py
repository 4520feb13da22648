"""The development set's scripts (`benchmarks/devset/`): the report counts what triage says,
and `make.py` keeps its dumps out of the repository."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

DEVSET = Path(__file__).resolve().parents[1] / "benchmarks" / "devset"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"devset_{name}", DEVSET / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report() -> ModuleType:
    return load("report")


def test_report_counts_a_real_triage_per_set(report, corpus, tmp_path, capsys):
    """Two sets: one a folder of dumps, one a dump itself; the planted bug is the one mismatch."""
    sets = tmp_path / "dumps"
    (sets / "xla").mkdir(parents=True)
    for name in ("layernorm", "layernorm-broken-fusion"):
        (sets / "xla" / name).symlink_to(corpus / "xla" / name)
    (sets / "single").symlink_to(corpus / "xla" / "slicing")
    keep = tmp_path / "keep"
    status = report.main(["--out", str(sets), "--jobs", "1", "--json", "--keep", str(keep)])
    assert status == 0
    table = json.loads(capsys.readouterr().out)["sets"]
    assert [d["dump"] for d in table["xla"]] == ["layernorm", "layernorm-broken-fusion"]
    assert [d["dump"] for d in table["single"]] == ["single"]
    clean, broken = table["xla"]
    assert clean["executions"] == clean["ok"] == 9 and clean["mismatch"] == 0
    assert broken["executions"] == 9 and broken["ok"] == 8 and broken["mismatch"] == 1
    [mismatch] = broken["mismatches"]
    assert (mismatch["module"], mismatch["name"]) == ("module_0010", "jit_ln")
    assert mismatch["culprit"] == "step 30 (0028 fusion)"
    assert table["single"][0]["executions"] == table["single"][0]["ok"] == 4
    assert broken["files"] == sum(1 for p in (corpus / "xla" / "layernorm-broken-fusion")
                                  .rglob("*") if p.is_file())
    saved = json.loads((keep / "xla" / "layernorm-broken-fusion.json").read_text())
    assert saved["summary"]["mismatch"] == 1


def test_report_groups_unsupported_and_errors_by_reason(report):
    def result(status, detail="", skipped=()):
        return {"module": "module_0001", "name": "jit_f", "execution": "snapshot.1",
                "status": status, "detail": detail, "culprit": None,
                "culprit_candidates": [], "skipped": list(skipped)}

    line = report.DumpReport("s", "d", "/d")
    report.count(line, [
        result("unsupported", skipped=[{"index": 3, "status": "unsupported: mulhi"},
                                       {"index": 4, "status": "unsupported: mulhi"}]),
        result("unsupported", "the reference, step 0 (before_optimizations), cannot be "
               "evaluated: unsupported: custom-call lapack_sgetrf_ffi"),
        result("error", "the reference, step 0 (input), cannot be evaluated: error: time "
               "limit of 5 s exceeded"),
        result("mismatch", "the recorded result differs from the reference (...)"),
        result("ok"),
    ])
    assert line.executions == 5
    assert dict(line.unsupported) == {"mulhi": 1, "custom-call lapack_sgetrf_ffi": 1}
    assert line.errors[0]["reason"] == "time limit of 5 s exceeded"
    assert line.mismatches[0]["culprit"] == "recorded result only"
    assert [line.counts[s] for s in report.STATUSES] == [1, 2, 1, 1]


def test_make_refuses_to_dump_into_the_repository():
    make = load("make")
    with pytest.raises(SystemExit) as exit_info:
        make.main(["lowp", "--out", str(DEVSET / "dumps"), "--python", sys.executable])
    assert exit_info.value.code == 2  # argparse's usage error


def test_make_will_not_overwrite_a_dump_unless_asked(tmp_path):
    make = load("make")
    dump = tmp_path / "lowp" / "program"
    dump.mkdir(parents=True)
    (dump / "module_0000.jit_f.before_optimizations.txt").write_text("HloModule f\n")
    with pytest.raises(SystemExit, match="already holds a dump"):
        make.fresh_folder(dump, replace=False)
    make.fresh_folder(dump, replace=True)
    assert dump.is_dir() and not any(dump.iterdir())


def test_report_names_a_set_or_dump_that_is_not_there(report, corpus, tmp_path, capsys):
    (tmp_path / "xla").symlink_to(corpus / "xla")
    for argv in (["nothere"], ["xla", "--only", "layernorm", "nothere"]):
        with pytest.raises(SystemExit):
            report.main(["--out", str(tmp_path), *argv])
        assert "nothere" in capsys.readouterr().err

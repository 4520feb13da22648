"""Indexing real XLA dump folders: the counts the corpus README states."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import file_module, scan
from workbench.sources import ReadError

# folder: (modules, per-pass steps, snapshots), from the corpus README.
XLA_FOLDERS = {
    "mlp": (9, 247, 9),
    "layernorm": (7, 157, 9),
    "fori_loop": (3, 83, 3),
    "int_ops": (5, 107, 7),
    "slicing": (4, 83, 4),
    "layernorm-broken-fusion": (7, 157, 9),
}


@pytest.mark.parametrize("folder", sorted(XLA_FOLDERS))
def test_corpus_counts(corpus: Path, folder: str) -> None:
    dump = scan(corpus / "xla" / folder)
    modules, per_pass, snapshots = XLA_FOLDERS[folder]
    assert len(dump.modules) == modules
    assert sum(1 for m in dump.modules for s in m.steps if s.kind == "pass") == per_pass
    assert sum(len(m.executions) for m in dump.modules) == snapshots
    assert dump.problems == []
    assert dump.others == ["program.py"]


def test_jit_ln_timeline(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", str(corpus / "xla" / "layernorm"), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert len(listing["modules"]) == 7
    (ln,) = [m for m in listing["modules"] if m["id"] == "module_0010"]
    assert ln["name"] == "jit_ln" and ln["format"] == "xla"
    passes = [s for s in ln["steps"] if s["xla_step"] is not None]
    assert [s["xla_step"] for s in passes] == list(range(36))
    kinds = [s["kind"] for s in ln["steps"]]
    # module.mlir, before_optimizations, 36 per-pass steps, cpu_after_optimizations.
    assert kinds == ["input", "before"] + ["pass"] * 36 + ["after"]
    assert ln["steps"][1]["pass"] == "before_optimizations"
    assert ln["steps"][-1]["pass"] == "cpu_after_optimizations"
    assert [s["index"] for s in ln["steps"]] == list(range(39))
    step28 = ln["steps"][2 + 28]
    assert step28["pass"] == "fusion"
    assert step28["pipeline"] == "HLO_passes_after_layout_assignment"
    assert step28["file"].endswith("0028.HLO_passes_after_layout_assignment.after_fusion"
                                   ".before_fusion-wrapper.txt")
    assert step28["changed"] is None
    assert ln["executions"] == [
        {"id": "snapshot.-17687811", "file": "module_0010.jit_ln.snapshot.-17687811.pb",
         "kind": "hlo-snapshot"}]
    artifact_kinds = {a["kind"] for a in ln["artifacts"]}
    assert {"buffer-assignment", "memory-usage-report", "live-range", "debug-options",
            "llvm-ir-with-opt", "object-file", "compile-options", "topology"} <= artifact_kinds
    assert listing["problems"] == []


def test_step_files_and_next_pass(corpus: Path) -> None:
    module = scan(corpus / "xla" / "layernorm").find_module("jit_ln")
    step = module.steps[2 + 28]
    assert step.next_pass == "fusion-wrapper"
    assert step.text is not None and step.proto is not None
    assert step.proto.file.endswith(".hlo.pb")
    assert all(s.text is not None for s in module.steps)
    assert module.steps[0].ir == "mlir" and module.steps[1].ir == "hlo"


def test_find_module(corpus: Path) -> None:
    dump = scan(corpus / "xla" / "layernorm")
    assert dump.find_module("module_0010").name == "jit_ln"
    assert dump.find_module("jit_ln").id == "module_0010"
    with pytest.raises(KeyError, match="no module"):
        dump.find_module("jit_nope")


def test_show_command(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(corpus / "xla" / "layernorm"), "jit_ln", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "module_0010"
    assert len(shown["steps"]) == 39
    assert main(["show", str(corpus / "xla" / "layernorm"), "jit_nope"]) == 2


def test_same_module_id_in_subfolders_are_different_modules(corpus: Path) -> None:
    dump = scan(corpus / "xla")
    assert len(dump.modules) == sum(modules for modules, _, _ in XLA_FOLDERS.values())
    keys = {module.key for module in dump.modules}
    assert len(keys) == len(dump.modules)
    ln = dump.find_module("layernorm/module_0010")
    assert ln.name == "jit_ln"
    assert ln.steps[1].file == "layernorm/module_0010.jit_ln.before_optimizations.txt"
    assert ln.steps[0].file == "layernorm/module_0010.jit_ln/module.mlir"
    with pytest.raises(KeyError, match="ambiguous"):
        dump.find_module("module_0010")


def test_timestamped_runs_are_different_modules(tmp_path: Path) -> None:
    for ts in ("1700000000000", "1700000000555"):
        (tmp_path / f"{ts}.module_0000.jit_f.before_optimizations.txt").write_text("x")
        (tmp_path / f"{ts}.module_0000.jit_f.0000.p.after_pipeline-start.before_a.txt").write_text(
            "x")
    dump = scan(tmp_path, expand=False)
    assert sorted(m.key for m in dump.modules) == ["1700000000000.module_0000",
                                                  "1700000000555.module_0000"]
    assert all(len(m.steps) == 2 for m in dump.modules)


def test_unknown_files_are_others_not_errors(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hi")
    (tmp_path / "module_0001.jit_f.something-new.bin").write_bytes(b"\0")
    (tmp_path / "x.0001.pipe.after_pass.txt").write_text("not a module file")
    dump = scan(tmp_path)
    assert dump.modules == []
    assert sorted(dump.others) == ["module_0001.jit_f.something-new.bin", "notes.md",
                                   "x.0001.pipe.after_pass.txt"]
    assert dump.problems == []


def test_missing_folder_is_a_problem(tmp_path: Path) -> None:
    dump = scan(tmp_path / "nope")
    assert dump.modules == []
    assert [p.reason for p in dump.problems] == [f"no such folder: {tmp_path / 'nope'}"]


def test_unlistable_folder_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "module_0001.jit_f.before_optimizations.txt").write_text("x")
    (tmp_path / "module_0002.jit_g.before_optimizations.txt").write_text("x")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    # Tests may run as root, for whom chmod changes nothing: make scandir refuse instead.
    monkeypatch.setattr(os, "scandir", scandir)
    dump = scan(tmp_path)
    assert [m.name for m in dump.modules] == ["jit_g"]
    assert [(p.file, p.reason) for p in dump.problems] == [
        ("locked", "cannot list folder: Permission denied")]


def test_trace_folders_scanned_together_stay_apart(corpus: Path) -> None:
    dump = scan(corpus / "mlir")
    traces = {m.key: m for m in dump.modules if m.format == "mlir-trace"}
    assert sorted(traces) == ["mlir-trace-broken/module_0000", "mlir-trace-clean/module_0000"]
    for key, module in traces.items():
        folder = key.split("/")[0]
        assert len(module.steps) == 10
        assert [e.file for e in module.executions] == [
            f"{folder}/module_0000.jit_f.snapshot.0.pb"]
        assert all(s.text is not None and s.text.file.startswith(folder + "/")
                   for s in module.steps)


def test_file_module_reads_one_file_as_scan_does(corpus: Path, tmp_path: Path) -> None:
    trace = corpus / "mlir" / "mlir-trace-broken" / "module_0000.jit_f.mlir-trace.pb"
    module = file_module(trace)
    (scanned,) = [m for m in scan(trace.parent).modules if m.key == module.key]
    assert (module.key, module.name, module.format) == ("module_0000", "jit_f", "mlir-trace")
    assert [s.pass_name for s in module.steps] == [s.pass_name for s in scanned.steps]
    with pytest.raises(ReadError, match="file not found"):
        file_module(tmp_path / "gone.mlir-trace.pb")
    broken = tmp_path / trace.name
    broken.write_bytes(trace.read_bytes()[:40])
    with pytest.raises(ReadError, match=trace.name):
        file_module(broken)
    (tmp_path / "notes.txt").write_text("nothing of a dump\n")
    with pytest.raises(ReadError, match="holds no modules"):
        file_module(tmp_path / "notes.txt")


def test_mlir_candidate_suffixes_cover_what_the_mlir_claimers_read() -> None:
    """The index skips importing the MLIR claimers when no path left ends in one of these."""
    from workbench.formats.dump_formats import MLIR_CANDIDATE_SUFFIXES
    from workbench.formats.mlir_files import SNIFF_SUFFIXES

    assert set(SNIFF_SUFFIXES) <= set(MLIR_CANDIDATE_SUFFIXES)
    assert ".mlir" in MLIR_CANDIDATE_SUFFIXES  # IR tree files


def test_a_stray_file_in_an_xla_dump_imports_no_mlir_claimer(corpus: Path, tmp_path: Path
                                                             ) -> None:
    import shutil
    import subprocess
    import sys

    folder = tmp_path / "dump"
    shutil.copytree(corpus / "xla" / "layernorm", folder)
    (folder / "READY").write_text("")  # a marker a test harness leaves: listed as other
    code = (
        "import sys\n"
        "from workbench.index import scan\n"
        f"dump = scan({str(folder)!r})\n"
        "print(dump.others, sorted(m for m in sys.modules if m.startswith('workbench.formats.')"
        " and 'mlir' in m))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "['READY', 'program.py'] []"
    (folder / "notes.txt").write_text("not an MLIR log\n")
    # Read by the MLIR claimer, and not taken.
    assert scan(folder).others == ["READY", "notes.txt", "program.py"]


def test_every_declared_format_claims_with_one_argument_order() -> None:
    """Each format's claimer takes `(dump, paths)`; each expansion `(dump)`; names unique."""
    import inspect

    from workbench.formats.dump_formats import EXPANSIONS, FORMATS

    assert len({known.name for known in FORMATS}) == len(FORMATS) >= 4
    for known in FORMATS:
        assert list(inspect.signature(known.claimer()).parameters) == ["dump", "paths"], known
    for expansion in EXPANSIONS:
        function = getattr(importlib.import_module(expansion.module), expansion.function)
        assert list(inspect.signature(function).parameters) == ["dump"], expansion

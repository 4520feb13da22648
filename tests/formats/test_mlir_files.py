"""Indexing the MLIR corpus folders: which file becomes which module or artifact."""

from __future__ import annotations

import shutil
from pathlib import Path

from workbench.formats.mlir_files import sniff
from workbench.index import scan


def test_compile_folder(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-compile-jit_f")
    formats = {m.id: m.format for m in dump.modules}
    assert formats == {"input.mlir": "mlir", "ir-tree/builtin_module_jit_f": "mlir-ir-tree"}
    tree = dump.find_module("ir-tree/builtin_module_jit_f")
    assert {(a.kind, a.file) for a in tree.artifacts} == {
        ("mlir-action-log", "actions.log"), ("mlir-reports", "compile.log")}
    assert dump.others == ["jit_f.vmfb"]
    plain = dump.find_module("input.mlir")
    assert plain.name == "jit_f"
    assert [(s.kind, s.scope) for s in plain.steps] == [("input", "builtin.module @jit_f")]


def test_to_loops_folder(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-opt-to-loops")
    formats = {m.id: m.format for m in dump.modules}
    assert formats == {
        "actions.log": "mlir-actions",  # three print-ir logs here: it belongs to none alone
        "input.mlir": "mlir",
        "output.mlir": "mlir",
        "print-ir-after-change.log": "mlir-print-ir",
        "print-ir-before-after-module-scope.log": "mlir-print-ir",
        "print-ir-generic-debuginfo.log": "mlir-print-ir",
    }
    change = dump.find_module("print-ir-after-change.log")
    assert change.name == "jit_f"
    assert [a.kind for a in change.artifacts] == ["mlir-reports"]
    assert [s.timing_s for s in change.steps] == [0.0050, 0.0001, 0.0012, 0.0073, 0.0003,
                                                  0.0054]
    assert dump.problems == []


def test_report_logs_alone(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-opt-list-reports")
    formats = {m.id: m.format for m in dump.modules}
    assert formats == {"input.mlir": "mlir", "reports-list.log": "mlir-reports",
                       "timing-threaded.log": "mlir-reports"}


def test_single_log_file(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-opt-to-loops" / "print-ir-before-after-module-scope.log")
    (module,) = dump.modules
    assert module.format == "mlir-print-ir" and len(module.steps) == 20


def test_sniff() -> None:
    assert sniff(b"x\n// -----// IR Dump After A: a //----- //\n", b"", ".log") == "print-ir"
    assert sniff(b"[thread 1] completed `x`\n", b"", ".txt") == "actions"
    assert sniff(b"  ... Execution time report ...", b"", ".log") == "reports"
    assert sniff(b"module {}", b"mlir_reproducer: {", ".mlir") == "reproducer"
    assert sniff(b"module {}", b"module {}", ".mlir") == "mlir"
    assert sniff(b"hello", b"hello", ".log") is None


def test_mixed_and_garbage_files_never_crash(corpus: Path, tmp_path: Path) -> None:
    mlir = corpus / "mlir"
    # a stderr capture: diagnostics, then dumps, then reports (a real log behind real
    # diagnostics), a garbage .mlir, a non-UTF-8 plain .mlir, and a truncated action log
    mixed = ((mlir / "crash-reproducer" / "stderr.log").read_bytes()
             + (mlir / "iree-opt-to-loops" / "print-ir-after-change.log").read_bytes())
    (tmp_path / "stderr.log").write_bytes(mixed)
    (tmp_path / "garbage.mlir").write_bytes(b"\x00\x01\x02 not mlir \xff")
    (tmp_path / "latin1.mlir").write_bytes(b"module @caf\xe9 {\n}\n")
    actions = (mlir / "iree-opt-to-loops" / "actions.log").read_bytes()
    (tmp_path / "cut-actions.log").write_bytes(actions[: len(actions) // 3])
    shutil.copy(mlir / "iree-opt-list-reports" / "timing-threaded.log", tmp_path)
    dump = scan(tmp_path)
    by_id = {m.id: m for m in dump.modules}
    assert len(by_id["stderr.log"].steps) == 6
    assert by_id["stderr.log"].steps[0].timing_s == 0.0050
    assert "garbage.mlir" in {p.file for p in dump.problems}
    assert by_id["latin1.mlir"].format == "mlir"
    # the folder's one pass timeline is the stderr capture: the logs belong to it
    assert {(a.kind, a.file) for a in by_id["stderr.log"].artifacts} == {
        ("mlir-reports", "stderr.log"), ("mlir-action-log", "cut-actions.log"),
        ("mlir-reports", "timing-threaded.log")}

"""print-ir logs from the corpus: headers, scopes, pairs, options, failures, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.damage import huge_line, output_within
from workbench.formats.mlir_print_ir import (
    dumps_to_steps,
    parse_header,
    scan_print_ir,
    split_pass_options,
)
from workbench.index import scan
from workbench.loader import ReadError, read_text

PIPELINE = [
    "ConvertStableHloToIreeInputDialects", "CanonicalizerPass", "CSEPass",
    "LinalgGeneralizeNamedOpsPass", "LinalgElementwiseOpFusionPass", "CanonicalizerPass",
    "OneShotBufferizePass", "ConvertLinalgToLoopsPass", "CanonicalizerPass", "CSEPass",
]


@pytest.fixture(scope="module")
def to_loops(corpus: Path) -> Path:
    return corpus / "mlir" / "iree-opt-to-loops"


def _steps(folder: Path, name: str):
    log = scan_print_ir((folder / name).read_bytes(), name)
    assert log.problems == []
    return dumps_to_steps(log)


def test_after_change_has_six_changed_passes_with_options(to_loops: Path) -> None:
    steps = _steps(to_loops, "print-ir-after-change.log")
    assert [s.pass_name for s in steps] == [
        "ConvertStableHloToIreeInputDialects", "CSEPass", "LinalgGeneralizeNamedOpsPass",
        "LinalgElementwiseOpFusionPass", "OneShotBufferizePass", "ConvertLinalgToLoopsPass",
    ]
    assert [s.argument for s in steps] == [
        "iree-stablehlo-to-iree-input", "cse", "linalg-generalize-named-ops",
        "linalg-fuse-elementwise-ops", "one-shot-bufferize", "convert-linalg-to-loops",
    ]
    bufferize = steps[4]
    assert bufferize.options is not None
    assert "bufferize-function-boundaries=true" in bufferize.options
    assert bufferize.options.endswith("use-encoding-for-memory-space=false")
    assert all(s.kind == "pass" and s.ir == "mlir" for s in steps)
    # op scope: function passes show the function, module passes the module
    assert [s.scope for s in steps] == [
        "builtin.module @jit_f", "func.func @main", "func.func @main", "func.func @main",
        "builtin.module @jit_f", "func.func @main",
    ]


def test_step_ranges_hold_exactly_the_ir(to_loops: Path) -> None:
    steps = _steps(to_loops, "print-ir-after-change.log")
    first = read_text(to_loops, steps[0].text)
    assert first.startswith("#map = affine_map")
    assert first.rstrip().endswith("}")
    last = read_text(to_loops, steps[-1].text)
    assert last.startswith("func.func public @main(")
    # the report after the last dump is not part of it
    assert "statistics" not in last and "===" not in last


def test_module_scope_pairs_before_and_after(to_loops: Path) -> None:
    steps = _steps(to_loops, "print-ir-before-after-module-scope.log")
    befores = [s for s in steps if s.kind == "before-pass"]
    afters = [s for s in steps if s.kind == "pass"]
    assert len(befores) == len(afters) == 10
    assert [s.pass_name for s in afters] == PIPELINE
    for before in befores:
        after = steps[before.pair]
        assert after.pair == before.index
        assert (after.pass_name, after.target) == (before.pass_name, before.target)
        assert after.index == before.index + 1
    # module scope: every dump shows the module; the header names the op the pass ran on
    assert {s.scope for s in steps} == {"builtin.module @jit_f"}
    assert [s.target for s in afters][1:5] == ["func.func @main"] * 4
    assert afters[0].target == "builtin.module @jit_f"


def test_generic_debuginfo_log_parses(to_loops: Path) -> None:
    steps = _steps(to_loops, "print-ir-generic-debuginfo.log")
    assert [s.pass_name for s in steps] == PIPELINE
    assert steps[1].scope == "func.func @main"  # generic form: "func.func"() <{sym_name...
    text = read_text(to_loops, steps[0].text)
    assert text.startswith("#loc2 = loc(")
    assert text.rstrip().endswith('#loc10 = loc("input.mlir":13:5)')  # trailing #loc aliases


def test_after_failure_dump_after_diagnostics(corpus: Path) -> None:
    folder = corpus / "mlir" / "crash-reproducer"
    steps = _steps(folder, "print-ir-after-failure.log")
    assert len(steps) == 1
    assert steps[0].kind == "pass-failed"
    assert steps[0].pass_name == "OneShotBufferizePass"
    assert read_text(folder, steps[0].text).startswith("module {")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("// -----// IR Dump After CSEPass: cse ('func.func' operation: @main) //----- //",
         ("After", "CSEPass", False, "cse", None, "func.func @main")),
        ("// -----// IR Dump Before Foo Failed: foo{a=1 b} //----- //",
         ("Before", "Foo", True, "foo", "a=1 b", None)),
        ("// -----// IR Dump After P: p{} //----- //", ("After", "P", False, "p", "", None)),
        # older MLIR: no argument or options, optional `// ` lead and module-scope suffix
        ("*** IR Dump After CSE ***", ("After", "CSE", False, None, None, None)),
        ("// *** IR Dump After CSE *** ('module' operation: @argsort)",
         ("After", "CSE", False, None, None, "module @argsort")),
        ("*** IR Dump After Canonicalizer Failed ***",
         ("After", "Canonicalizer", True, None, None, None)),
        ("*** IR Dump After CSE ***  (function: bar)",
         ("After", "CSE", False, None, None, "function @bar")),
    ],
)
def test_header_styles(line: str, expected: tuple) -> None:
    header = parse_header(line)
    assert header is not None
    got = (header.when, header.pass_name, header.failed, header.argument, header.options,
           header.target)
    assert got == expected


def test_split_pass_options() -> None:
    assert split_pass_options("inline{default-pipeline=canonicalize op-pipelines=}") == (
        "inline", "default-pipeline=canonicalize op-pipelines=")
    assert split_pass_options("cse") == ("cse", None)


def test_old_style_log_derived_from_a_real_one(to_loops: Path, tmp_path: Path) -> None:
    """Older MLIR's headers (no corpus sample exists): the real log with its headers
    rewritten the way MLIR's IRPrinting.cpp of that time printed them."""
    lines = (to_loops / "print-ir-after-change.log").read_text().splitlines(keepends=True)
    out = []
    for line in lines:
        header = parse_header(line.rstrip("\n"))
        out.append(f"*** IR Dump After {header.pass_name} ***\n" if header else line)
    (tmp_path / "old.log").write_text("".join(out))
    old = _steps(tmp_path, "old.log")
    new = _steps(to_loops, "print-ir-after-change.log")
    assert [s.pass_name for s in old] == [s.pass_name for s in new]
    assert [read_text(tmp_path, s.text) for s in old] == [read_text(to_loops, s.text)
                                                           for s in new]


def test_truncated_log_keeps_whole_dumps_and_flags_the_cut(to_loops: Path,
                                                           tmp_path: Path) -> None:
    data = (to_loops / "print-ir-after-change.log").read_bytes()
    header_at = data.index(b"// -----// IR Dump After OneShotBufferizePass")
    cut = tmp_path / "cut.log"
    cut.write_bytes(data[: header_at + len(b"// -----// IR Dump After OneShot")])
    log = scan_print_ir(cut.read_bytes(), "cut.log")
    assert len(log.dumps) == 4
    assert any("unreadable IR dump header" in p.reason for p in log.problems)


def test_long_header_line_cut_short(corpus: Path) -> None:
    """The failure log's header line (long pass options) grown to 1 MiB by repeating it, then
    cut before its end: a log whose line ends were lost while it was written. The header
    pattern used to backtrack over it for minutes."""
    data = (corpus / "mlir" / "crash-reproducer" / "print-ir-after-failure.log").read_bytes()
    header_at = data.index(b"// -----// IR Dump After")
    damaged = huge_line(data, header_at, 1024 * 1024).data
    damaged = damaged[: header_at + 1024 * 1024 - 7]
    script = ("import sys\n"
              "from workbench.formats.mlir_print_ir import scan_print_ir\n"
              "log = scan_print_ir(sys.stdin.buffer.read(), 'cut.log')\n"
              "print(len(log.dumps), log.problems[0].reason)\n")
    assert output_within(30, script, damaged).startswith(
        f"0 unreadable IR dump header at byte {header_at}: '// -----// IR Dump After")


def test_garbage_and_non_utf8_become_problems(to_loops: Path, tmp_path: Path) -> None:
    data = (to_loops / "print-ir-after-change.log").read_bytes()
    bad = data.replace(b"func.func public @main", b"func.func public @m\xffain", 1)
    (tmp_path / "bad.log").write_bytes(bad)
    (tmp_path / "noise.log").write_bytes(b"// -----// IR Dump After \x00\x01\x02\n" * 3)
    dump = scan(tmp_path)
    reasons = {p.file: p.reason for p in dump.problems}
    assert "not UTF-8" in reasons["bad.log"]
    assert "noise.log" in reasons
    module = dump.find_module("bad.log")
    assert len(module.steps) == 6
    offset = bad.index(b"\xff")
    holding = [s for s in module.steps if s.text.start <= offset < s.text.end]
    assert len(holding) == 1
    with pytest.raises(ReadError, match="not UTF-8"):
        read_text(tmp_path, holding[0].text)
    assert read_text(tmp_path, module.steps[1].text).startswith("func.func")


def test_empty_log_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "x.log").write_bytes(b"")
    dump = scan(tmp_path)
    assert dump.modules == []
    assert dump.others == ["x.log"]

"""The real IR tree folder: all 912 files in run order, nested scopes resolved."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from workbench.formats.mlir_ir_tree import parse_tree_path
from workbench.index import scan
from workbench.loader import read_text
from workbench.model import Module


@pytest.fixture(scope="module")
def compile_dir(corpus: Path) -> Path:
    return corpus / "mlir" / "iree-compile-jit_f"


@pytest.fixture(scope="module")
def tree(compile_dir: Path) -> Module:
    dump = scan(compile_dir)
    (module,) = [m for m in dump.modules if m.format == "mlir-ir-tree"]
    return module


def _completed_pass_runs(actions_log: Path) -> list[tuple[str, str]]:
    """(pass, op name) of every pass run in completion order: when its IR was printed."""
    runs, stack = [], []
    begin = re.compile(r"\[thread [^\]]*\] begins \([^)]*\) Action (`pass-execution` running "
                       r"`(?P<pass>[^`]*)` on Operation `(?P<op>[^`]*)`)?")
    for line in actions_log.read_text().splitlines():
        if match := begin.match(line):
            stack.append((match["pass"], match["op"]) if match["pass"] else None)
        elif line.startswith("[thread ") and " completed `" in line:
            run = stack.pop()
            if run and run[0] != "mlir::detail::OpToOpPassAdaptor":
                runs.append(run)
    return runs


def test_all_912_files_in_one_timeline(tree: Module, compile_dir: Path) -> None:
    files = {p.relative_to(compile_dir).as_posix()
             for p in (compile_dir / "ir-tree").rglob("*.mlir")}
    assert len(files) == 912
    assert len(tree.steps) == 912
    assert {s.text.file for s in tree.steps} == files
    assert [s.index for s in tree.steps] == list(range(912))
    first = tree.steps[0]
    assert first.text.file.endswith("/0_iree-check-vhlostablehlo-mix-usage.mlir")
    assert first.argument == "iree-check-vhlostablehlo-mix-usage"
    assert first.pass_name == "CheckVHLOStableHloMixUsage"  # from the file's header
    assert tree.name == "jit_f"
    assert tree.steps[-1].text.file.endswith("/vm_module_jit_f/240_11_iree-vm-materialize-"
                                             "ref-discards.mlir")


def test_order_matches_the_compile_s_own_action_log(tree: Module, compile_dir: Path) -> None:
    """The same compile logged its actions: each pass run's completion is when its file was
    written. Two known limits: two `util.initializer`s share one folder (their files cannot
    be told apart), and the inliner runs canonicalize on callees in call-graph order."""
    runs = _completed_pass_runs(compile_dir / "actions.log")
    assert len(runs) == 912
    ours = [(s.pass_name, s.scope.rsplit("/", 1)[-1].split(" @")[0]) for s in tree.steps]
    same_pass = sum(a[0] == b[0] for a, b in zip(ours, runs, strict=True))
    assert same_pass >= 912 - 27
    ours = [r for r in ours if r[1] != "util.initializer"]
    theirs = [r for r in runs if r[1] != "util.initializer"]
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert len(differ) == 2 and differ[1] == differ[0] + 1
    i = differ[0]
    assert ours[i] == theirs[i + 1] and ours[i + 1] == theirs[i]
    assert ours[i][0] == "CanonicalizerPass" and ours[i][1].startswith("vm.")


def test_nested_scopes_resolved(tree: Module) -> None:
    scopes = {s.scope for s in tree.steps}
    assert "builtin.module @jit_f" in scopes
    assert "builtin.module @jit_f/func.func @main" in scopes
    assert "builtin.module @jit_f/util.func @__main_memoize_lookup" in scopes
    assert ("builtin.module @jit_f/hal.executable @main_dispatch_0/hal.executable.variant "
            "@embedded_elf_x86_64/builtin.module/func.func @main_dispatch_0_matmul_4x8x8_f32"
            in scopes)
    # a folder with no file of its own is still named by its operation
    assert ("builtin.module @jit_f/stream.executable @main_dispatch_0/builtin.module/func.func "
            "@main_dispatch_0_matmul_4x8x8_f32" in scopes)
    assert not any("_" in part.split(" @")[0] for s in scopes for part in s.split("/"))


def test_step_text_is_the_ir_without_the_header(tree: Module, compile_dir: Path) -> None:
    text = read_text(compile_dir, tree.steps[3].text)
    assert text.startswith("func.func public @main(")
    assert tree.steps[3].options == ""  # `{}` in the header: no options set


def test_shared_folder_is_reported(compile_dir: Path) -> None:
    dump = scan(compile_dir)
    (problem,) = dump.problems
    assert problem.file.endswith("util_initializer_no-symbol-name")
    assert "approximate" in problem.reason


def test_names_only_scan_orders_by_counters(compile_dir: Path) -> None:
    dump = scan(compile_dir, expand=False)
    (tree,) = [m for m in dump.modules if m.format == "mlir-ir-tree"]
    assert len(tree.steps) == 912
    assert tree.steps[0].pass_name == "iree-check-vhlostablehlo-mix-usage"
    assert tree.steps[3].scope == "builtin_module_jit_f/func_func_main"


def test_tree_scanned_from_inside(compile_dir: Path) -> None:
    top = compile_dir / "ir-tree" / "builtin_module_jit_f"
    dump = scan(top)
    (tree,) = dump.modules
    assert tree.format == "mlir-ir-tree" and len(tree.steps) == 912
    assert tree.steps[0].text.file == "0_iree-check-vhlostablehlo-mix-usage.mlir"


def test_parse_tree_path() -> None:
    parsed = parse_tree_path("t/builtin_module_m/func_func_f/3_1_cse.mlir", "x")
    assert parsed is not None
    top, file = parsed
    assert top == "t/builtin_module_m"
    assert file.counters == (3, 1) and file.argument == "cse"
    assert file.chain == ("builtin_module_m", "func_func_f")
    assert parse_tree_path("notes/3_1_cse.mlir", "x") is None
    assert parse_tree_path("builtin_module_m/README.mlir", "x") is None


def test_unreadable_and_garbage_tree_files(compile_dir: Path, tmp_path: Path) -> None:
    top = tmp_path / "builtin_module_jit_f"
    shutil.copytree(compile_dir / "ir-tree" / "builtin_module_jit_f" / "func_func_main",
                    top / "func_func_main")
    shutil.copy(compile_dir / "ir-tree" / "builtin_module_jit_f" / "1_vhlo-to-version.mlir",
                top)
    (top / "2_garbage.mlir").write_bytes(b"\xff\xfe garbage")
    (top / "func_func_main" / "2_0_stablehlo-legalize-composite-to-call.mlir").write_bytes(b"")
    dump = scan(tmp_path)
    (tree,) = dump.modules
    assert len(tree.steps) == 25
    assert any(p.file.endswith("2_garbage.mlir") for p in dump.problems)
    assert any(p.file.endswith("2_0_stablehlo-legalize-composite-to-call.mlir")
               for p in dump.problems)


def test_before_files_pair_with_after_files(compile_dir: Path, tmp_path: Path) -> None:
    """With --mlir-print-ir-before-all the tree also holds Before files (no corpus sample):
    a real After file beside a copy whose header says Before, numbered as MLIR would."""
    source = compile_dir / "ir-tree" / "builtin_module_jit_f"
    top = tmp_path / "builtin_module_jit_f"
    top.mkdir()
    after = (source / "1_vhlo-to-version.mlir").read_text()
    (top / "0_vhlo-to-version.mlir").write_text(after.replace("IR Dump After", "IR Dump Before",
                                                              1))
    (top / "1_vhlo-to-version.mlir").write_text(after)
    (tree,) = scan(tmp_path).modules
    before, after_step = tree.steps
    assert (before.kind, after_step.kind) == ("before-pass", "pass")
    assert (before.pair, after_step.pair) == (1, 0)

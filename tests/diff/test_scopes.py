"""Scopes of MLIR dumps: which holds which, cutting a dump down to one operation, splicing."""

from __future__ import annotations

from pathlib import Path

from workbench.diff.ir_diff import diff_normalized, same_ir
from workbench.diff.normalize import NormalizeOptions
from workbench.diff.scopes import relative_scope, restrict, splice
from workbench.diff.steps import load_normalized
from workbench.index import scan

LOOPS = "mlir/iree-opt-to-loops"


def test_relative_scope() -> None:
    module, function = "builtin.module @m", "func.func @f"
    assert relative_scope(module, module) == [] and relative_scope(None, None) == []
    assert relative_scope(module, function) == [function]
    assert relative_scope(function, module) is None
    assert relative_scope(function, "func.func @g") is None
    path = "builtin.module @m/hal.executable @e/hal.executable.variant @v/builtin.module"
    assert relative_scope("builtin.module @m/hal.executable @e", path) == [
        "hal.executable.variant @v", "builtin.module"]
    assert relative_scope(path, "builtin.module @m") is None
    assert relative_scope(None, module) is None


def test_function_inside_a_module_dump_equals_the_function_dump(corpus: Path) -> None:
    """The IR after CSE, printed whole (module scope, `#map` aliases) and alone (function
    scope, the same maps inline): cut to the function, equal modulo names, not as printed."""
    dump = scan(corpus / LOOPS)
    whole = dump.find_module("print-ir-before-after-module-scope.log").steps[5]
    alone = dump.find_module("print-ir-after-change.log").steps[1]
    assert whole.pass_name == alone.pass_name == "CSEPass"
    module = restrict(load_normalized(dump.root, whole.text, "mlir"), ["func.func @main"])
    function = load_normalized(dump.root, alone.text, "mlir")
    assert module is not None and module.raw[0].startswith("func.func public @main(")
    assert len(module.raw) == len(function.raw)
    assert same_ir(module, function)
    raw = NormalizeOptions.raw()
    module_raw = restrict(load_normalized(dump.root, whole.text, "mlir", raw), ["func.func @main"])
    assert module_raw is not None
    assert not diff_normalized(module_raw, load_normalized(dump.root, alone.text, "mlir",
                                                           raw)).equal


def test_operation_without_symbol_is_found_in_its_parent(corpus: Path) -> None:
    """IR tree scopes name nested modules without a symbol (`.../builtin.module`)."""
    dump = scan(corpus / "mlir/iree-compile-jit_f")
    module = dump.find_module("ir-tree/builtin_module_jit_f")
    variant = next(s for s in module.steps
                   if s.scope and s.scope.endswith("/hal.executable.variant @embedded_elf_x86_64"))
    text = load_normalized(dump.root, variant.text, "mlir")
    path = relative_scope(variant.scope, variant.scope + "/builtin.module")
    assert path == ["builtin.module"]
    inner = restrict(text, path)
    assert inner is not None and inner.raw[0].startswith(("module", "builtin.module"))
    assert inner.raw[-1] == "}" and len(inner.raw) < len(text.raw)


def test_splice_puts_a_function_dump_in_its_place(corpus: Path) -> None:
    dump = scan(corpus / LOOPS)
    steps = dump.find_module("print-ir-after-change.log").steps
    module = load_normalized(dump.root, steps[0].text, "mlir")
    function = load_normalized(dump.root, steps[3].text, "mlir")
    spliced = splice(module, ["func.func @main"], function)
    assert spliced is not None
    assert spliced.raw[0] == module.raw[0]  # the module around it is kept
    back = restrict(spliced, ["func.func @main"])
    assert back is not None and same_ir(back, function)
    assert not same_ir(restrict(module, ["func.func @main"]), function)  # type: ignore[arg-type]  # restrict keeps the module's type
    assert splice(module, ["func.func @missing"], function) is None

"""Step lookup, like-with-like step diffs and changed flags on real MLIR pass logs and trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.diff.ir_diff import same_ir
from workbench.diff.scopes import restrict
from workbench.diff.steps import (
    NORMALIZED,
    ScopeMismatch,
    diff_steps,
    diff_with_previous,
    find_step,
    load_normalized,
    mark_changed,
    previous_state,
)
from workbench.facts import FACTS
from workbench.index import scan
from workbench.model import Source

LOOPS = "mlir/iree-opt-to-loops"
TREE = "mlir/iree-compile-jit_f"


def test_find_step_by_name_argument_and_index(corpus: Path) -> None:
    dump = scan(corpus / LOOPS)
    after_change = dump.find_module("print-ir-after-change.log")
    assert find_step(after_change, "cse").pass_name == "CSEPass"
    assert find_step(after_change, "CSEPass").index == 1
    module_scope = dump.find_module("print-ir-before-after-module-scope.log")
    # The Before and After dumps of one run: the After dump is meant.
    assert find_step(module_scope, "LinalgGeneralizeNamedOpsPass").index == 7
    with pytest.raises(KeyError, match=r"ambiguous.*4 \(CSEPass \(Before\).*19 \(CSEPass"):
        find_step(module_scope, "CSEPass")
    tree = scan(corpus / TREE).find_module("ir-tree/builtin_module_jit_f")
    # Not an XLA module: four digits are a timeline index too.
    assert find_step(tree, "0123") is tree.steps[123]
    with pytest.raises(KeyError, match="timeline indices 0-911"):
        find_step(tree, "912")


def test_changed_flags_agree_with_the_after_change_log(corpus: Path) -> None:
    """MLIR prints a pass in --mlir-print-ir-after-change only when it changed the IR: the
    after-all logs of the same pipeline, one with function-scope dumps in generic form with
    locations, one with Before and After dumps of the whole module, must flag exactly those."""
    dump = scan(corpus / LOOPS)
    printed = [s.pass_name for s in dump.find_module("print-ir-after-change.log").steps]
    generic = dump.find_module("print-ir-generic-debuginfo.log")
    mark_changed(dump.root, generic)
    assert generic.steps[0].changed is None
    assert all(s.changed is not None for s in generic.steps[1:])
    assert [s.pass_name for s in generic.steps if s.changed] == printed[1:]
    module_scope = dump.find_module("print-ir-before-after-module-scope.log")
    mark_changed(dump.root, module_scope)
    assert [s.pass_name for s in module_scope.steps if s.changed] == printed
    assert not any(s.changed for s in module_scope.steps if s.kind == "before-pass")


def test_module_pass_is_compared_with_the_functions_as_left(corpus: Path) -> None:
    """OneShotBufferize (a module pass) runs after three function passes: the IR before it is
    the first module dump with the last function dump spliced in."""
    dump = scan(corpus / LOOPS)
    module = dump.find_module("print-ir-after-change.log")
    previous = previous_state(dump.root, module, 4)
    assert previous is not None and previous.positions == [0, 3]
    function = restrict(previous.text, ["func.func @main"])
    assert function is not None
    assert same_ir(function, load_normalized(dump.root, module.steps[3].text, "mlir"))
    found = diff_with_previous(dump.root, module, 4)
    assert found is not None
    diff, _ = found
    removed = [line.text for h in diff.hunks() for line in h.lines if line.op == "-"]
    assert any("tensor.empty()" in line for line in removed)
    # What the function passes did is in the IR before: not shown again.
    assert not any("linalg.matmul" in line for line in removed)


def test_every_ir_tree_step_gets_a_flag(corpus: Path) -> None:
    """Dumps of functions, executables and nested modules without a symbol, spliced into the
    last dump of what holds them: every step but the first has something to compare with."""
    dump = scan(corpus / TREE)
    module = dump.find_module("ir-tree/builtin_module_jit_f")
    mark_changed(dump.root, module)
    unknown = [s.index for s in module.steps if s.changed is None]
    assert unknown == [0]
    flags = [s.changed for s in module.steps[1:]]
    assert flags.count(True) > 100 and flags.count(False) > 100


def test_unrelated_scopes_are_refused(corpus: Path) -> None:
    dump = scan(corpus / TREE)
    module = dump.find_module("ir-tree/builtin_module_jit_f")
    function = next(s for s in module.steps if s.scope and s.scope.endswith("/func.func @main"))
    other = next(s for s in module.steps if s.scope and s.scope.endswith("/util.func @main"))
    with pytest.raises(ScopeMismatch, match="neither holds the other"):
        diff_steps(dump.root, function, other)


def test_normalized_texts_are_cached_until_the_file_changes(corpus: Path, tmp_path: Path) -> None:
    """The store holds what it was given, costed by the file's size, and drops a rewritten
    file."""
    step_file = next((corpus / "xla").rglob("*after_optimizations.txt"))
    copy = tmp_path / step_file.name
    copy.write_bytes(step_file.read_bytes())
    FACTS.clear()
    first = load_normalized(tmp_path, Source(copy.name), "hlo")
    assert load_normalized(tmp_path, Source(copy.name), "hlo") is first
    assert FACTS.cost == NORMALIZED.cost(copy.stat().st_size)

    before = copy.stat().st_size
    copy.write_text(copy.read_text() + "\n")  # rewritten in place (size changes)
    again = load_normalized(tmp_path, Source(copy.name), "hlo")
    assert again is not first
    assert FACTS.cost == NORMALIZED.cost(before) + NORMALIZED.cost(before + 1)

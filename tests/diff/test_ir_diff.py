"""Diffs of real corpus pairs: what the pass did, renumbering-only pairs, real rewires."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from workbench.diff.ir_diff import diff_texts, same_ir, section_counts
from workbench.diff.normalize import NormalizeOptions
from workbench.diff.render import diff_json, side_by_side, unified
from workbench.diff.steps import diff_steps
from workbench.index import scan

sys.path.insert(0, str(Path(__file__).parent))
from find_renumbering_pairs import log_sections

RAW = NormalizeOptions.raw()


def _text(corpus: Path, pattern: str) -> str:
    (path,) = corpus.glob(pattern)
    return path.read_text()


def test_fusion_step_builds_fused_computations(corpus: Path) -> None:
    before = _text(corpus, "xla/layernorm/module_0010.jit_ln.0027.*.txt")
    after = _text(corpus, "xla/layernorm/module_0010.jit_ln.0028.*.txt")
    diff = diff_texts(before, after)
    assert not diff.equal
    status = {s.name: s.status for s in diff.sections()}
    assert status["%fused_computation"] == "added"
    assert status["%fused_computation.1"] == "added"
    assert status["%main.3"] == "changed"
    assert status["%region_0.1"] == status["%region_1.2"] == "unchanged"
    assert section_counts(diff.sections()) == {"changed": 2, "added": 2, "removed": 0,
                                               "unchanged": 2}
    text = "\n".join(unified(diff, "a", "b"))
    assert "+  %add_rsqrt_fusion = f32[6]{0} fusion(%x.1, %reduce_sum.14), kind=kLoop, " \
           "calls=%fused_computation.1" in text
    assert "-  %rsqrt.0 = f32[6]{0} rsqrt(%add.0)" in text
    # Lines shown are the original ones, metadata included.
    assert 'metadata={op_name="jit(ln)/rsqrt" stack_frame_id=9}' in text


# Found by tests/diff/find_renumbering_pairs.py: equal modulo renumbering, different as printed.
RENUMBERING_PAIRS = [
    ("xla/fori_loop/module_0002.jit_f.0021.*.txt", "xla/fori_loop/module_0002.jit_f.0022.*.txt"),
    ("xla/mlp/module_0004.jit__normal.0024.*.txt", "xla/mlp/module_0004.jit__normal.0025.*.txt"),
    ("xla-jax-tests/numpy-reducers/module_0192.jit_wrapped_fun.cpu_after_optimizations.txt",
     "xla-jax-tests/numpy-reducers/module_0210.jit_wrapped_fun.cpu_after_optimizations.txt"),
    ("xla-jax-tests/numpy-reducers/module_0242.jit_wrapped_fun.cpu_after_optimizations.txt",
     "xla-jax-tests/numpy-reducers/module_0254.jit_wrapped_fun.cpu_after_optimizations.txt"),
    ("xla/layernorm/module_0006.jit_convert_element_type/module.mlir",
     "xla/mlp/module_0008.jit_convert_element_type/module.mlir"),
]


@pytest.mark.parametrize(("pattern_a", "pattern_b"), RENUMBERING_PAIRS)
def test_renumbering_only_pairs(corpus: Path, pattern_a: str, pattern_b: str) -> None:
    a, b = _text(corpus, pattern_a), _text(corpus, pattern_b)
    assert diff_texts(a, b).equal
    assert not diff_texts(a, b, options=RAW).equal


def test_swapped_operands_are_a_change(corpus: Path) -> None:
    before = _text(corpus, "xla/layernorm/module_0010.jit_ln.0027.*.txt")
    line = "  %sub.15 = f32[6,8]{1,0} subtract(%x.1, %sub.14)"
    assert line in before
    swapped = before.replace(line, "  %sub.15 = f32[6,8]{1,0} subtract(%sub.14, %x.1)")
    diff = diff_texts(before, swapped)
    assert not diff.equal and diff.removed == diff.added == 1
    # Same stems, swapped names: only the name check can tell.
    renamed = before.replace("%sub.14", "%sub.99").replace("%sub.15", "%sub.14") \
        .replace("%sub.99", "%sub.15")
    assert diff_texts(before, renamed).equal
    rewired = before.replace("multiply(%sub.15, %mul.10)", "multiply(%sub.14, %mul.10)")
    assert not diff_texts(before, rewired).equal


def test_swapped_call_targets_are_a_change(corpus: Path) -> None:
    after = _text(corpus, "xla/layernorm/module_0010.jit_ln.0028.*.txt")
    swapped = after.replace("calls=%fused_computation.1", "calls=%TMP") \
        .replace("calls=%fused_computation,", "calls=%fused_computation.1,") \
        .replace("calls=%TMP", "calls=%fused_computation")
    assert swapped != after
    diff = diff_texts(after, swapped)
    assert not diff.equal and diff.removed == diff.added == 2


def _loops_log(corpus: Path, name: str) -> list[str]:
    return log_sections((corpus / "mlir/iree-opt-to-loops" / name).read_text())


def test_mlir_cse_shows_only_removed_ops(corpus: Path) -> None:
    sections = _loops_log(corpus, "print-ir-before-after-module-scope.log")
    before, after = sections[4], sections[5]  # Before and After CSEPass, module scope
    diff = diff_texts(before, after)
    raw = diff_texts(before, after, options=RAW)
    assert raw.removed > 2 * diff.removed  # renumbering no longer shows
    removed = [line.text.strip() for h in diff.hunks() for line in h.lines if line.op == "-"]
    assert sum("tensor.empty()" in line for line in removed) == 3
    assert [s.status for s in diff.sections() if s.name == "func.func @main"] == ["changed"]


def test_mlir_debuginfo_locations_are_ignored(corpus: Path) -> None:
    sections = _loops_log(corpus, "print-ir-generic-debuginfo.log")
    assert any("loc(" in line for line in sections[0].splitlines())
    for section in sections:
        assert diff_texts(section, section.replace("loc(", "loc(\"moved\" at ")).equal


def test_mlir_ir_tree_canonicalize_pair(corpus: Path) -> None:
    tree = corpus / "mlir/iree-compile-jit_f/ir-tree/builtin_module_jit_f/func_func_main"
    files = sorted(tree.glob("*.mlir"), key=lambda p: [int(x) for x in p.name.split("_")[:2]])
    changed = 0
    for first, second in itertools.pairwise(files):
        a, b = first.read_text(), second.read_text()
        normalized, raw = diff_texts(a, b), diff_texts(a, b, options=RAW)
        assert normalized.removed <= raw.removed and normalized.added <= raw.added
        changed += not normalized.equal
    assert changed > 0


def test_renderings(corpus: Path) -> None:
    before = _text(corpus, "xla/layernorm/module_0010.jit_ln.0027.*.txt")
    after = _text(corpus, "xla/layernorm/module_0010.jit_ln.0028.*.txt")
    diff = diff_texts(before, after)
    lines = unified(diff, "a", "b", context=0)
    assert lines[:2] == ["--- a", "+++ b"]
    assert all(line[0] in "-+@" for line in lines[2:])
    columns = side_by_side(diff, "a", "b", width=120)
    assert any(" > " in line for line in columns) and all(len(x) <= 120 for x in columns)
    payload = diff_json(diff, "a", "b")
    assert payload["equal"] is False and payload["sections"]["added"] == 2
    assert payload["hunks"][0]["lines"][0]["a"] >= 1
    assert unified(diff_texts(before, before), "a", "b") == []


@pytest.mark.parametrize("folder", ["xla/layernorm", "xla/fori_loop", "xla/mlp",
                                    "mlir/iree-opt-to-loops"])
def test_every_step_pair_gives_a_well_formed_diff(corpus: Path, folder: str) -> None:
    """Over every pair of neighbouring steps: the opcodes tile both texts in order, lines
    called equal have equal keys, and the diff is empty exactly when `same_ir` says so."""
    dump = scan(corpus / folder)
    pairs = 0
    for module in dump.modules:
        for before, after in itertools.pairwise(module.steps):
            if before.ir != after.ir or before.text is None or after.text is None:
                continue
            diff = diff_steps(dump.root, before, after)
            i = j = 0
            for tag, i1, i2, j1, j2 in diff.opcodes:
                assert (i1, j1) == (i, j)
                if tag == "equal":
                    assert i2 - i1 == j2 - j1 > 0
                    assert diff.a.keys[i1:i2] == diff.b.keys[j1:j2]
                i, j = i2, j2
            assert (i, j) == (len(diff.a.raw), len(diff.b.raw))
            assert diff.equal == same_ir(diff.a, diff.b)
            pairs += 1
    assert pairs > 10

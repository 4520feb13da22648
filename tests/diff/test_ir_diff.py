"""Diffs of real corpus pairs: what the pass did, renumbering-only pairs, real rewires."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from workbench.diff.ir_diff import (
    IRDiff,
    _pairable,
    diff_normalized,
    diff_texts,
    same_ir,
    section_counts,
)
from workbench.diff.normalize import NormalizeOptions, normalize
from workbench.diff.render import side_by_side, unified
from workbench.diff.steps import diff_steps, diff_with_previous, load_normalized
from workbench.index import scan
from workbench.loader import read_text
from workbench.output.json_shapes import diff_json

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


LOOPS = "mlir/iree-opt-to-loops"


def test_mlir_cse_before_and_after(corpus: Path) -> None:
    dump = scan(corpus / LOOPS)
    module = dump.find_module("print-ir-before-after-module-scope.log")
    before, after = module.steps[4], module.steps[5]
    assert (before.kind, after.kind, after.pass_name, after.pair) == \
        ("before-pass", "pass", "CSEPass", 4)
    diff = diff_steps(dump.root, before, after)
    raw = diff_steps(dump.root, before, after, RAW)
    assert raw.removed > 2 * diff.removed  # renumbering no longer shows
    removed, added = _changed_ops(diff)
    # Three tensor.empty() merged into earlier ones, and the three ops that wrote into them
    # rewired (their `outs` operand changed).
    assert removed == ["linalg.generic"] * 3 + ["tensor.empty"] * 3
    assert added == ["linalg.generic"] * 3
    assert [s.status for s in diff.sections() if s.name == "func.func @main"] == ["changed"]


def _changed_ops(diff: IRDiff) -> tuple[list[str], list[str]]:
    """The ops of the removed and added lines, sorted."""
    def op(text: str) -> str:
        return text.split(" = ", 1)[-1].split(" ", 1)[0].rstrip("()")

    lines = [line for h in diff.hunks() for line in h.lines]
    return (sorted(op(line.text.strip()) for line in lines if line.op == "-"),
            sorted(op(line.text.strip()) for line in lines if line.op == "+"))


def test_mlir_debuginfo_locations_are_ignored(corpus: Path) -> None:
    dump = scan(corpus / LOOPS)
    module = dump.find_module("print-ir-generic-debuginfo.log")
    texts = [read_text(dump.root, step.text) for step in module.steps if step.text]
    assert len(texts) == 10 and "loc(" in texts[0]
    for text in texts:
        moved = text.replace("loc(", 'loc("moved" at ')
        assert diff_texts(text, moved).equal
        assert not diff_texts(text, moved, options=NormalizeOptions().without("locations")).equal


def test_mlir_function_against_its_module(corpus: Path) -> None:
    """A function-scope dump is compared with the function inside the module dump before it:
    aliases (`#map`) and the inline attributes of the function dump compare alike, and only
    what CSE did shows."""
    dump = scan(corpus / LOOPS)
    module = dump.find_module("print-ir-after-change.log")
    first, cse = module.steps[0], module.steps[1]
    assert (first.scope, cse.scope, cse.pass_name) == \
        ("builtin.module @jit_f", "func.func @main", "CSEPass")
    diff = diff_steps(dump.root, first, cse)
    assert diff.a.sections[1].name == "func.func @main" and diff.a.sections[1].header == 0
    removed, added = _changed_ops(diff)
    assert removed == ["linalg.generic"] * 3 + ["tensor.empty"] * 3
    assert added == ["linalg.generic"] * 3
    # Compared whole, the module's other lines would show as removed.
    whole = diff_normalized(load_normalized(dump.root, first.text, "mlir"),
                            load_normalized(dump.root, cse.text, "mlir"))
    assert whole.removed > diff.removed + 5


def test_mlir_ir_tree_steps_against_the_ir_before_them(corpus: Path) -> None:
    """Every dump of one function in an IR tree, against the IR before it: renumbering no
    longer shows (fewer changed lines in all, some steps equal only once normalized)."""
    dump = scan(corpus / "mlir/iree-compile-jit_f")
    module = dump.find_module("ir-tree/builtin_module_jit_f")
    changed = unchanged = hidden = 0
    normalized_lines = raw_lines = 0
    for position, step in enumerate(module.steps):
        if not step.scope or not step.scope.endswith("/util.func @main"):
            continue
        found = diff_with_previous(dump.root, module, position)
        raw = diff_with_previous(dump.root, module, position, RAW)
        assert found is not None and raw is not None
        diff, previous = found
        assert previous.positions[0] < position
        normalized_lines += diff.removed + diff.added
        raw_lines += raw[0].removed + raw[0].added
        changed += not diff.equal
        unchanged += diff.equal
        hidden += diff.equal and not raw[0].equal
    assert changed > 5 and unchanged > 5 and hidden > 0
    assert normalized_lines < raw_lines


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


@pytest.mark.parametrize("folder", ["layernorm", "fori_loop", "mlp"])
def test_signatures_change_no_diff(corpus: Path, folder: str) -> None:
    """Lines left out by their signature could not have paired: every pair of neighbouring
    steps diffs the same with and without signatures, and some pairs leave lines out."""
    pairs = left_out = 0
    for module in scan(corpus / "xla" / folder).modules:
        texts = [read_text(corpus / "xla" / folder, step.text) for step in module.steps
                 if step.text is not None]
        for before, after in itertools.pairwise(texts):
            a, b = normalize(before), normalize(after)
            if a.kind != "hlo" or b.kind != "hlo":
                continue
            diff = diff_normalized(a, b)
            plain = diff_normalized(replace(a, signature_function=None),
                                    replace(b, signature_function=None))
            assert diff.opcodes == plain.opcodes
            pairs += 1
            gaps = [(0, len(a.raw), 0, len(b.raw))]
            pairable = _pairable(a, b, gaps)
            assert pairable is not None
            left_out += len(pairable[0]) < len(a.raw) or len(pairable[1]) < len(b.raw)
    assert pairs > 10 and left_out > 0


def test_names_printed_without_sigils(corpus: Path) -> None:
    before = _text(corpus, "xla/layernorm/module_0010.jit_ln.0027.*.txt")
    after = _text(corpus, "xla/layernorm/module_0010.jit_ln.0028.*.txt")
    sigiled = diff_texts(before, after)
    bare = diff_texts(before.replace("%", ""), after.replace("%", ""))
    assert (bare.removed, bare.added) == (sigiled.removed, sigiled.added)
    assert [(s.name.lstrip("%"), s.status) for s in sigiled.sections()] == \
        [(s.name, s.status) for s in bare.sections()]
    # One side with sigils, the other without: the same IR.
    assert diff_texts(before, before.replace("%", "")).equal
    assert not diff_texts(before, before.replace("%", ""), options=RAW).equal
    # Renumbering only, and a real rewire, without sigils.
    a, b = (_text(corpus, pattern).replace("%", "") for pattern in RENUMBERING_PAIRS[0])
    assert diff_texts(a, b).equal and not diff_texts(a, b, options=RAW).equal
    rewired = before.replace("multiply(%sub.15, %mul.10)", "multiply(%sub.14, %mul.10)")
    assert not diff_texts(before.replace("%", ""), rewired.replace("%", "")).equal

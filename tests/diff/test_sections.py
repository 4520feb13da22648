"""Which computations/functions correspond, and which are printed identically."""

from __future__ import annotations

from pathlib import Path

from workbench.diff.ir_diff import diff_texts
from workbench.diff.normalize import normalize
from workbench.diff.sections import identical_sections, pair_sections


def test_identical_computations_are_matched_whole(corpus: Path) -> None:
    (before,) = corpus.glob("xla/layernorm/module_0010.jit_ln.0027.*.txt")
    (after,) = corpus.glob("xla/layernorm/module_0010.jit_ln.0028.*.txt")
    a, b = normalize(before.read_text()), normalize(after.read_text())
    pairs = pair_sections(a, b)
    names = [(a.sections[x].name, b.sections[y].name) for x, y in pairs]
    assert names == [("(module)", "(module)"), ("%region_0.1", "%region_0.1"),
                     ("%region_1.2", "%region_1.2"), ("%main.3", "%main.3")]
    blocks = identical_sections(a, b, pairs)
    # The two regions (and the blank line after each), not the entry computation.
    covered = [(i, n) for i, _, n in blocks]
    regions = [a.sections[k] for k in (1, 2)]
    assert covered == [(s.header, s.end - s.header + 1) for s in regions]
    for i, j, n in blocks:
        assert a.raw[i:i + n] == b.raw[j:j + n]


def test_sections_sharing_a_name_pair_by_what_holds_them(corpus: Path) -> None:
    """Every IREE executable has a variant `@embedded_elf_x86_64`. With the first executable
    taken out, the second one's variant must pair with itself, not with the first's."""
    tree = corpus / "mlir/iree-compile-jit_f/ir-tree/builtin_module_jit_f"
    text = (tree / "170_iree-hal-prune-executables.mlir").read_text()
    lines = text.splitlines()
    start = lines.index("  hal.executable private @main_dispatch_0 {")
    end = lines.index("  }", start) + 1
    assert lines[start + 1].lstrip().startswith("hal.executable.variant public "
                                                 "@embedded_elf_x86_64")
    without = "\n".join(lines[:start] + lines[end:]) + "\n"
    diff = diff_texts(text, without)
    status = {(s.old_name or s.name): s.status for s in diff.sections()}
    assert status["hal.executable @main_dispatch_0"] == "removed"
    assert status["hal.executable @main_dispatch_1"] == "unchanged"
    removed = [s for s in diff.sections() if s.status == "removed"]
    assert [s.name for s in removed][:2] == ["hal.executable @main_dispatch_0",
                                             "hal.executable.variant @embedded_elf_x86_64"]
    assert not [s for s in diff.sections() if s.status in ("changed", "added")
                and s.name != "(module)"]
    assert diff.removed == end - start

"""Step facts for breakpoints from real dumps: source locations in HLO and MLIR, op counts."""

from __future__ import annotations

from pathlib import Path

from workbench.debug.facts import (
    DumpFacts,
    changed_locations,
    hlo_location_ops,
    location_matches,
    mlir_location_ops,
)
from workbench.index import scan

LN = "xla/layernorm-broken-fusion"


def test_hlo_locations_come_from_stack_frames(corpus: Path) -> None:
    dump = scan(corpus / LN)
    ln = dump.find_module("jit_ln")
    assert ln is not None and ln.steps[1].file is not None
    before = hlo_location_ops((dump.root / ln.steps[1].file).read_text())
    # program.py line 4 is `return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b`.
    assert "rsqrt" in before[("program.py", 4)]
    assert all(file in ("program.py", "<string>") for file, _ in before)


def test_fusion_changes_the_rsqrt_line(corpus: Path) -> None:
    dump = scan(corpus / LN)
    ln = dump.find_module("jit_ln")
    facts = DumpFacts(dump.root, ln)
    info = facts.info(ln.steps[30], ops=True, locations=True)
    assert info.step.pass_name == "fusion"
    assert ("program.py", 4) in info.changed_locations
    assert info.ops["sqrt"] == 1 and "sqrt" not in info.ops_before
    unchanged = facts.info(ln.steps[3], locations=True)  # a pipeline-start: same IR as before
    assert unchanged.changed_locations == set()
    assert facts.previous(ln.steps[1]) is None  # module.mlir before it is another IR


def test_mlir_locations_through_aliases(corpus: Path) -> None:
    text = (corpus / LN / "module_0010.jit_ln" / "module.mlir").read_text()
    ops = mlir_location_ops(text)
    lines = {line for file, line in ops if file == "program.py"}
    assert {3, 4} <= lines
    assert any("stablehlo.rsqrt" in names for (file, _), names in ops.items()
               if file == "program.py")


def test_location_matching_and_changes() -> None:
    assert location_matches(("/home/me/program.py", 4), "program.py", 4)
    assert not location_matches(("/home/me/myprogram.py", 4), "program.py", 4)
    assert not location_matches(("program.py", 5), "program.py", 4)
    before = {("a.py", 1): ("add",), ("a.py", 2): ("mul",)}
    after = {("a.py", 1): ("add",), ("a.py", 2): ("add", "mul"), ("a.py", 3): ("neg",)}
    assert changed_locations(before, after) == {("a.py", 2), ("a.py", 3)}

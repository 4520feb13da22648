"""IR statistics from printed IR: sizes and op histograms of real HLO and MLIR dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.index import scan
from workbench.loader import ReadError
from workbench.model import Source, Step
from workbench.stats import (
    hlo_stats,
    mlir_stats,
    op_delta,
    step_reports,
    step_stats,
)

LN = "xla/layernorm-broken-fusion"


def _hlo_instruction_lines(text: str) -> int:
    """Instruction lines counted independently: `name = ...` lines inside computations."""
    inside, count = False, 0
    for line in text.splitlines():
        if line.endswith("{") and "(" in line and not line.startswith(" "):
            inside = True
        elif line == "}":
            inside = False
        elif inside and " = " in line:
            count += 1
    return count


def test_fusion_step_of_jit_ln(corpus: Path) -> None:
    dump = scan(corpus / LN)
    ln = dump.find_module("jit_ln")
    before, after = ln.steps[29], ln.steps[30]
    assert (after.xla_step, after.pass_name) == (28, "fusion")
    old, new = step_stats(dump.root, before), step_stats(dump.root, after)
    text = (dump.root / after.file).read_text()  # type: ignore[operator]  # a per-pass step has a file
    assert new.instructions == _hlo_instruction_lines(text)
    assert new.lines == len(text.splitlines()) and new.bytes == len(text.encode())
    # The fusion pass builds fused computations; the planted bug turns rsqrt into sqrt.
    assert new.ops["fusion"] == 2 and "fusion" not in old.ops
    assert new.ops.get("sqrt") == 1 and "rsqrt" not in new.ops and old.ops["rsqrt"] == 1
    delta = op_delta(old, new)
    assert delta["fusion"] == 2 and delta["rsqrt"] == -1 and delta["sqrt"] == 1
    assert all(change != 0 for change in delta.values())
    assert new.regions > old.regions  # fused computations were added


def test_tuple_shaped_instructions_are_counted(corpus: Path) -> None:
    text = corpus / "xla" / "fori_loop" / "module_0002.jit_f.before_optimizations.txt"
    stats = hlo_stats(text.read_text())
    assert stats.ops.get("while") == 1
    assert stats.ops.get("tuple", 0) >= 1
    assert stats.instructions == _hlo_instruction_lines(text.read_text())


def test_mlir_module(corpus: Path) -> None:
    text = (corpus / LN / "module_0010.jit_ln" / "module.mlir").read_text()
    stats = mlir_stats(text)
    assert stats.ops["stablehlo.rsqrt"] == 1
    assert stats.ops["func.func"] == 1 and stats.regions == 1
    assert stats.ops["builtin.module"] == 1
    assert stats.instructions == sum(stats.ops.values())
    for op in ("stablehlo.broadcast_in_dim", "stablehlo.divide", "stablehlo.reduce"):
        in_text = sum(1 for line in text.splitlines() if f"= {op}" in line)
        assert in_text > 0 and stats.ops[op] == in_text


def test_mlir_generic_form(corpus: Path) -> None:
    log = corpus / "mlir" / "iree-opt-to-loops" / "print-ir-generic-debuginfo.log"
    stats = mlir_stats(log.read_text())
    assert stats.ops.get("func.func", 0) >= 1
    assert any(op.startswith("arith.") for op in stats.ops)
    assert not any(op.startswith('"') for op in stats.ops)


def test_unreadable_steps_raise_read_errors(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    step = Step(index=0, pass_name="x", ir="hlo", kind="pass", text=Source("empty.txt"))
    with pytest.raises(ReadError, match="empty file"):
        step_stats(tmp_path, step)
    proto_only = Step(index=0, pass_name="x", ir="hlo", kind="pass", proto=Source("a.hlo.pb"))
    with pytest.raises(ReadError, match="no printed IR"):
        step_stats(tmp_path, proto_only)


def test_reports_joined_to_steps(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-opt-to-loops")
    log = next(m for m in dump.modules if m.key == "print-ir-after-change.log")
    joined = step_reports(dump.root, log)
    assert joined.reports.timing and joined.reports.statistics
    assert set(joined.timing) == {s.index for s in log.steps}
    for step in log.steps:
        assert joined.timing[step.index].name == step.pass_name
        assert joined.timing[step.index].wall_s == step.timing_s
    assert {joined.statistics[i].name for i in joined.statistics} <= {s.pass_name
                                                                      for s in log.steps}
    assert any(node.statistics for node in joined.statistics.values())


def test_no_reports_is_empty_not_an_error(corpus: Path) -> None:
    dump = scan(corpus / LN)
    joined = step_reports(dump.root, dump.find_module("jit_ln"))
    assert joined.timing == {} and joined.statistics == {} and joined.reports.problems == []

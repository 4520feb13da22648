"""Dumps of newer producers: JAX 0.12's tuple-operand text, XLA GPU's artifacts and optimized
module, the kernel emitters' MLIR files (TensorFlow's CPU dumps), long module names, gaps in
the per-pass numbering."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.check import check_dump
from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import HloParseError, parse_hlo_text
from workbench.formats.xla_names import parse_xla_name
from workbench.index import scan
from workbench.output.short_names import NAME_LIMIT, short_name, with_short_name

PRODUCERS = Path(__file__).parent.parent / "data" / "producers"
JAX12 = PRODUCERS / "topk_sort_take"
EMITTERS = PRODUCERS / "long_name_emitters"
GPU = PRODUCERS / "gpu_convert_element_type"
GPU_F = PRODUCERS / "gpu_sort_topk_scatter"
OPTIMIZED = "module_0004.jit_topk_sort_take.cpu_after_optimizations"

TUPLES = """HloModule t, entry_computation_layout={(f32[3]{0})->(f32[3]{0}, s32[])}

ENTRY %main (x: f32[3]) -> (f32[3], s32[]) {
  %x = f32[3]{0} parameter(0)
  %i = s32[] constant(7)
  %inner = (f32[3]{0}, s32[]) tuple(%x, %i)
  %outer = ((f32[3]{0}, s32[]), f32[3]{0}) tuple(%inner, %x)
  %neg = f32[3]{0} negate(%outer#1)
  ROOT %r = (f32[3]{0}, s32[]) tuple(%neg, %outer#0#1)
}
"""


def test_tuple_element_operands_are_get_tuple_elements() -> None:
    module = parse_hlo_text(TUPLES, "t.txt")
    entry = module.entry
    names = [i.name for i in entry.instructions]
    # each element defined once, before its first user, as a get-tuple-element named as written
    assert names == ["x", "i", "inner", "outer", "outer#1", "neg", "outer#0", "outer#0#1", "r"]
    element = entry.by_name["outer#0#1"]
    assert (element.opcode, element.operands, element.tuple_index) == (
        "get-tuple-element", ["outer#0"], 1)
    assert str(element.shape) == "s32[]"
    assert entry.by_name["outer#1"].operands == ["outer"]
    assert entry.by_name["neg"].operands == ["outer#1"]
    assert entry.by_name["r"].operands == ["neg", "outer#0#1"]


@pytest.mark.parametrize(("operand", "message"), [
    ("%outer#2", "%outer has no tuple element 2"),
    ("%x#0", "%x has no tuple element 0 (its shape is f32[3]"),
    ("%nowhere#0", "unknown operand %nowhere#0"),
])
def test_bad_tuple_element_operand_names_line_and_reason(operand: str, message: str) -> None:
    text = TUPLES.replace("negate(%outer#1)", f"negate({operand})")
    with pytest.raises(HloParseError) as raised:
        parse_hlo_text(text, "t.txt")
    assert raised.value.line == 8
    assert message in raised.value.message


def test_jax12_text_and_proto_give_the_same_program() -> None:
    """The text elides the get-tuple-elements the proto holds (under other names): both
    readers give the same instructions otherwise, the same operand structure throughout."""
    text = parse_hlo_text((JAX12 / f"{OPTIMIZED}.txt").read_text(), OPTIMIZED)
    proto = read_hlo_proto((JAX12 / f"{OPTIMIZED}.hlo.pb").read_bytes(), OPTIMIZED)
    written = [i for i in text.entry.instructions if "#" in i.name]
    assert {i.name for i in written} >= {"custom-call#0", "custom-call#1", "sort.11#0",
                                         "sort.11#1"}

    def signature(module, computation):  # opcodes with the tuple indices they read
        by_name = computation.by_name
        return sorted((i.opcode, str(i.shape), i.tuple_index,
                       tuple(by_name[o].opcode for o in i.operands))
                      for i in computation.instructions)

    assert signature(text, text.entry) == signature(proto, proto.entry)


def test_jax12_dump_reads_without_problems() -> None:
    dump = scan(JAX12)
    problems = check_dump(dump)
    assert problems == [] and dump.problems == []
    (module,) = dump.modules
    assert module.pass_step_count == 22
    assert module.steps[-1].pass_name == "cpu_after_optimizations"


def test_gpu_dump_optimized_module_last_and_artifacts_claimed() -> None:
    dump = scan(GPU)
    assert check_dump(dump) == [] and dump.problems == []
    (module,) = dump.modules
    assert module.steps[-1].pass_name == "sm_9.0a_gpu_after_optimizations"
    assert module.steps[-1].kind == "after"
    kinds = {artifact.kind for artifact in module.artifacts}
    assert {"autotune-results", "gpu-target-config", "priority-fusion-dump", "thunk-metadata",
            "thunk-sequence", "module-config", "after-spmd-partitioner",
            "before-config-assignment"} <= kinds
    assert dump.others == []


def test_gpu_tuple_operand_text_parses() -> None:
    file = GPU_F / "module_3977.jit_f.sm_9.0a_gpu_after_optimizations.txt"
    module = parse_hlo_text(file.read_text(), file.name)
    element = module.entry.by_name["fusion.1#0"]
    assert element.operands == ["fusion.1"] and element.tuple_index == 0


def test_thunk_sequence_after_thunk_passes_is_an_artifact() -> None:
    """Written by XLA GPU for a module with a while loop (`conv_bn_f32`'s `jit_step`)."""
    info = parse_xla_name("module_4639.jit_step.thunk_sequence_after_thunk_passes.txt")
    assert info is not None
    assert (info.kind, info.role, info.name) == (
        "artifact", "thunk-sequence-after-thunk-passes", "jit_step")


@pytest.mark.parametrize("shape", [
    "sm_9.0a_gpu", "sm_8.6_gpu", "sm_10.0a_gpu", "sm_12.0_gpu", "gfx942_gpu", "cpu"])
def test_optimized_module_of_any_platform(shape: str) -> None:
    info = parse_xla_name(f"module_0001.jit_f.{shape}_after_optimizations.txt")
    assert info is not None and (info.kind, info.platform) == ("after", shape)


def test_emitter_files_are_artifacts_of_their_module() -> None:
    dump = scan(EMITTERS)
    assert dump.problems == [] and check_dump(dump) == []
    (module,) = dump.modules  # not one module per emitter file
    emitted = sorted((a.kind, a.label) for a in module.artifacts if a.kind.startswith("emitter"))
    kernel = "bitcast_add_fusion_kernel_module"
    assert emitted == [("emitter-post-lowering", kernel), ("emitter-post-optimization", kernel),
                       ("emitter-pre-optimization", kernel)]
    kinds = {a.kind for a in module.artifacts}
    assert {"compile-options", "topology"} <= kinds  # JAX 0.12's `.textproto` files


def test_long_module_names_are_shortened_for_tables_only() -> None:
    (module,) = scan(EMITTERS).modules
    name = module.name
    assert len(name) > 100
    short = short_name(name)
    assert len(short) == NAME_LIMIT and short.startswith("jit_a_inference") and \
        short.endswith(name[-8:]) and "…" in short
    assert short_name("jit_f") == "jit_f"
    file = module.steps[-1].file or ""
    assert with_short_name(file, name) == file.replace(name, short)


def test_a_gap_in_the_per_pass_numbering_is_a_problem(tmp_path: Path) -> None:
    folder = tmp_path / "dump"
    shutil.copytree(JAX12, folder)
    for path in folder.glob("*.0005.*"):
        path.unlink()
    for path in [*folder.glob("*.0009.*"), *folder.glob("*.0010.*")]:
        path.unlink()
    dump = scan(folder)
    assert [(p.file, p.reason) for p in dump.problems] == [(
        "module_0004.jit_topk_sort_take",
        "per-pass steps 0005, 0009-0010 of 22 are missing (not written, or removed)")]
    assert scan(JAX12).problems == []


def test_newer_compare_order_is_read_from_text_and_proto() -> None:
    """JAX 0.12 writes a total-order float compare as `order=TOTAL` (text) and in a proto
    field of its own: both readers give TOTALORDER (sorting NaN and -0.0 depends on it), and
    an integer compare keeps its default."""
    name = "module_0004.jit_topk_sort_take.before_optimizations"
    text = parse_hlo_text((JAX12 / f"{name}.txt").read_text(), name)
    proto = read_hlo_proto((JAX12 / f"{name}.hlo.pb").read_bytes(), name)
    for module in (text, proto):
        kinds = {(i.name, i.comparison_type) for c in module.computations
                 for i in c.instructions if i.opcode == "compare"}
        assert ("lt_to.1", "TOTALORDER") in kinds
        assert ("lt.1", None) in kinds  # s32 < 0, printed without an order
        assert all("order" not in i.attrs for c in module.computations for i in c.instructions)


def test_index_comments_in_a_rank4_constant() -> None:
    """JAX 0.12 prints a rank-4 constant with index comments between its groups,
    `{ { /*i0=0*/ { /*i1=0*/ { -3.5, -2.5 }, ...`: they are not elements. The text's value is
    the proto's, in both modules the dump holds, and `ls --check` reads them without a
    problem."""
    root = PRODUCERS / "rank4_constant"
    expected = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2) - 3.5
    for stem in ("before_optimizations", "cpu_after_optimizations"):
        base = root / f"module_0000.jit_f.{stem}"
        text = parse_hlo_text(base.with_name(base.name + ".txt").read_text(), "f.txt")
        proto = read_hlo_proto(base.with_name(base.name + ".hlo.pb").read_bytes(), "f.pb")
        (constant,) = [i for c in text.computations for i in c.instructions
                       if i.opcode == "constant" and i.shape.dims == (1, 2, 2, 2)]
        assert "/*i0=0*/" in base.with_name(base.name + ".txt").read_text()
        assert np.array_equal(constant.literal, expected)
        (from_proto,) = [i for c in proto.computations for i in c.instructions
                         if i.name == constant.name]
        assert np.array_equal(from_proto.literal, constant.literal)
    assert check_dump(scan(root)) == []

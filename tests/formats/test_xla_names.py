"""XLA dump names: every kind the dumps write, with and without timestamps."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.formats import xla_names
from workbench.formats.xla_names import (
    _PASS_STEM_RE,
    _parse_by_patterns,
    parse_xla_name,
    split_module_prefix,
    split_pass_stem,
    split_pass_suffix,
)


@pytest.mark.parametrize(
    ("basename", "kind", "role", "name"),
    [
        ("module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion"
         ".before_fusion-wrapper.txt", "step", "text", "jit_ln"),
        ("module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion"
         ".before_fusion-wrapper.hlo.pb", "step", "proto", "jit_ln"),
        ("module_0000.jit_iota.0014.copy-insertion.after_adding_copies_to_resolve_interference"
         ".txt", "step", "text", "jit_iota"),
        ("module_0010.jit_ln.before_optimizations.txt", "before", "text", "jit_ln"),
        ("module_0010.jit_ln.before_optimizations.hlo.pb.gz", "before", "proto", "jit_ln"),
        ("module_0010.jit_ln.cpu_after_optimizations.hlo.pb", "after", "proto", "jit_ln"),
        ("module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt", "after", "text", "jit_f"),
        ("module_0001.jit_f.gfx90a_gpu_after_optimizations.txt", "after", "text", "jit_f"),
        ("module_0001.jit_f.after_optimizations.txt", "after", "text", "jit_f"),
        ("module_0010.jit_ln.cpu_after_optimizations-buffer-assignment.txt", "artifact",
         "buffer-assignment", "jit_ln"),
        ("module_0010.jit_ln.cpu_after_optimizations-buffer-assignment-values.txt", "artifact",
         "buffer-assignment-values", "jit_ln"),
        ("module_0010.jit_ln.cpu_after_optimizations-memory-usage-report.pb", "artifact",
         "memory-usage-report-proto", "jit_ln"),
        ("module_0010.jit_ln.cpu_after_optimizations-live-range.txt", "artifact", "live-range",
         "jit_ln"),
        ("module_0010.jit_ln.debug_options", "artifact", "debug-options", "jit_ln"),
        ("module_0010.jit_ln.snapshot.-17687811.pb", "snapshot", "snapshot", "jit_ln"),
        ("1700000000000.module_0003.jit_f.execution_0002.hlo_snapshot.pb", "snapshot",
         "snapshot", "jit_f"),
        ("module_0000.jit_f.mlir-trace.pb", "mlir-trace", "pb", "jit_f"),
        ("module_0004.before_optimizations.txt", "before", "text", ""),
    ],
)
def test_classifies(basename: str, kind: str, role: str, name: str) -> None:
    info = parse_xla_name(basename)
    assert info is not None
    assert (info.kind, info.role, info.name) == (kind, role, name)


def test_per_pass_fields() -> None:
    info = parse_xla_name(
        "1699999.module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion"
        ".before_fusion-wrapper.txt"
    )
    assert info is not None
    assert info.timestamp == "1699999"
    assert info.module_id == "module_0010"
    assert (info.xla_step, info.pipeline, info.pass_name, info.next_pass) == (
        28, "HLO_passes_after_layout_assignment", "fusion", "fusion-wrapper")


def test_execution_ids() -> None:
    snapshot = parse_xla_name("module_0010.jit_ln.snapshot.-17687811.pb")
    execution = parse_xla_name("module_0003.jit_f.execution_0002.hlo_snapshot.pb")
    assert snapshot is not None and snapshot.execution == "snapshot.-17687811"
    assert execution is not None and execution.execution == "execution_0002"


def test_module_names_with_dots_in_steps() -> None:
    info = parse_xla_name(
        "module_0001.cluster_0__XlaCompiledKernel_true__.12.0003.simp.after_algsimp.txt")
    assert info is not None and info.kind == "step"
    assert info.name == "cluster_0__XlaCompiledKernel_true__.12"


def test_kernel_artifacts_resolve_against_known_names() -> None:
    info = parse_xla_name("module_0012.jit__normal.broadcast_add_fusion.1_kernel_module"
                          ".ir-with-opt.ll")
    assert info is not None and info.kind == "kernel-artifact"
    assert info.role == "llvm-ir-with-opt"
    assert split_module_prefix(info.rest, {"jit__normal", "jit"}) == "jit__normal"


def test_not_xla() -> None:
    assert parse_xla_name("program.py") is None
    unknown = parse_xla_name("module_0001.jit_f.something-new.bin")
    assert unknown is not None and unknown.kind == "unknown"


def _split_by_regex(stem: str) -> tuple | None:
    match = _PASS_STEM_RE.fullmatch(stem)
    return None if match is None else (match[1], int(match[2]), match[3], match[4], match[5])


def test_pass_stems_split_as_the_pattern_says(corpus: Path) -> None:
    """The string-method split gives the regex's answer on every per-pass name of the corpus."""
    stems = {path.name.removesuffix(".hlo.pb").removesuffix(".txt")
             for path in corpus.rglob("*") if ".after_" in path.name}
    split = {stem: split_pass_stem(stem) for stem in stems}
    assert sum(parts is not None for parts in split.values()) > 500
    assert split == {stem: _split_by_regex(stem) for stem in stems}
    assert split_pass_stem("module_0010.jit_ln.0028.HLO_passes_after_layout_assignment"
                           ".after_fusion.before_fusion-wrapper") == (
        "module_0010.jit_ln", 28, "HLO_passes_after_layout_assignment", "fusion",
        "fusion-wrapper")


@pytest.mark.parametrize("stem", [
    "module_0001.jit_f.0001.pipe.after_pass",
    "module_0001.jit_f.0002.pipe.after_a.before_b.before_c",  # the first .before_ ends the pass
    "module_0001.jit_f.0003.pipe.after_a.before_",  # nothing after .before_: part of the pass
    "module_0001.jit_f.0004.pipe.after_.before_x",  # the pass name has at least one character
    "module_0001.jit_f.0005.pipe.after_x.0006.q.after_y",  # the last fitting .after_ ends it
    "module_0001.x.after_y.0007.p.after_z",
    "module_0001.jit_f.0005.pipe.after_x.before_y.after_z",  # ... when one after it does not fit
    "module_0001.0001.0002.after_pipe.after_rest",
    "module_0002.0008.pipe.after_p",
    ".0001.pipe.after_p",  # an empty head
    "0001.pipe.after_p",  # no head at all
    "module_0004.j.\u0661\u0662\u0663\u0664.pipe.after_p",  # other digits, as \\d takes them
    "module_0004.j.12345.pipe.after_p",
    "module_0004.j.0001..after_p",
    "module_0004.j.0001.pipe.after_",
    "module_0004.j.0001.pipe.before_p",
    "module_0003.j\n.0001.pipe.after_p",  # line breaks: `.` in the pattern does not take them
    "module_0003.j.0001.pi\npe.after_p",
    "module_0003.j.0001.pipe.after_p\n",
])
def test_unusual_pass_stems_split_as_the_pattern_says(stem: str) -> None:
    assert split_pass_stem(stem) == _split_by_regex(stem)


# Heads a per-pass name's suffix is read after; those with `.after_` or a line break are not.
_HEADS = ["module_0001.jit_f", "module_0001", "1700.module_0002.f", "module_0002.f.0001",
          "module_0003.f.0001.0002", "module_0004.a.b", "module_0005.j\u0661", "m", ""]
_SUFFIXES = ["0001.pipe.after_pass", "0002.pipe.after_a.before_b.before_c",
             "0003.pipe.after_a.before_", "0004.pipe.after_.before_x",
             "0005.pipe.after_x.0006.q.after_y", "0028.after_layout.after_p.before_q",
             "0001.0002.after_pipe.after_rest", "\u0661\u0662\u0663\u0664.pipe.after_p",
             "12345.pipe.after_p", "0001..after_p", "0001.pipe.after_", "0001.pi.pe.after_p",
             "0001.pipe.after_p\n", "0001.pi\npe.after_p", "0001.pipe.after_p/x",
             "x.0001.pipe.after_p", "0001.pipe.before_p"]


def test_pass_suffixes_split_as_their_names() -> None:
    """A suffix read once gives the split of the whole name after each head it is read after
    (one without `.after_` and line breaks), or is left to that split."""
    read = {suffix: split_pass_suffix(suffix) for suffix in _SUFFIXES}
    assert sum(key is not None for key in read.values()) >= 5
    for suffix, key in read.items():
        assert split_pass_suffix(suffix) == key  # the second time from the table
        if key is not None:
            for head in _HEADS:
                step, pipeline, pass_name, next_pass = key
                assert split_pass_stem(f"{head}.{suffix}") == (
                    head, step, pipeline, pass_name, next_pass or None), (head, suffix)


# Module names the table must read as the patterns do: plain ones, and ones that could change
# how the rest of a name reads (those the table leaves to the patterns).
_NAMES = ["jit_f", "jit__linspace", "cluster_0__XlaCompiledKernel_true__", "a-b", "x\u0663",
          "snapshot", "execution_0001", "1234", "\u0661\u0662\u0663\u0664", "sm_80", "sm_8",
          "gfx90a_gpu_after_optimizations", "cpu_after_optimizations", "after_optimizations",
          "before_optimizations", "mlir-trace", "debug_options", "x.after_y", "a.b", "",
          "j\n"]
# Tails that read differently after some of the names above.
_TAILS = ["5.pb", "0.pb", "5_gpu_after_optimizations.txt", "0001.p.after_q.txt",
          "txt.cpu_after_optimizations.txt", "hlo_snapshot.pb", "options", "ll", "o",
          "pb", "", ".", "after_x.txt", "1.p.after_q.txt", "0001.p.after_q.txt.gz"]


def test_the_tail_table_reads_as_the_patterns(corpus: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus file name, and its tail after each of `_NAMES`, with and without a
    timestamp, reads the same through the table as through the patterns."""
    monkeypatch.setattr(xla_names, "_PLAIN_NAMES", {})
    monkeypatch.setattr(xla_names, "_TAILS", {})
    tails = set(_TAILS)
    for path in corpus.rglob("module_*"):
        head = xla_names.MODULE_RE.match(path.name)
        if head is not None and head["rest"] and "." in head["rest"]:
            tails.add(head["rest"].partition(".")[2])
    assert len(tails) > 300
    names = [f"{prefix}module_0007.{name}.{tail}" for prefix in ("", "170000.")
             for name in _NAMES for tail in sorted(tails)]
    names += ["module_0007", "module_0007.jit_f", "12.module_x.jit_f.debug_options",
              "module_7x.jit_f.debug_options", "program.py", "module_0001.jit_f.txt\n"]
    for name in names:  # twice: the second time from the table
        assert parse_xla_name(name) == _parse_by_patterns(name), name
        assert parse_xla_name(name) == _parse_by_patterns(name), name
    assert len(xla_names._TAILS) > 300  # the table was used


@pytest.mark.parametrize(("basename", "name", "step", "pipeline", "pass_name"), [
    # PyTorch/XLA's graph id ends the module name in a dot and four digits (a real name of
    # tests/data/producers/torch_xla), and XLA CPU has a pipeline named after_layout_assignment.
    ("module_0000.SyncTensorsGraph.1199.0046.after_layout_assignment.after_pipeline-start"
     ".before_pipeline-end.txt", "SyncTensorsGraph.1199", 46, "after_layout_assignment",
     "pipeline-start"),
    ("module_0003.SyncTensorsGraph.4321.0002.sharding-removal.after_dce.before_pipeline-end"
     ".hlo.pb", "SyncTensorsGraph.4321", 2, "sharding-removal", "dce"),
    ("module_0001.foo.1234.0001.0002.after_pipe.after_rest.txt", "foo.1234.0001", 2,
     "after_pipe", "rest"),
])
def test_module_names_ending_in_four_digits(basename: str, name: str, step: int,
                                            pipeline: str, pass_name: str) -> None:
    """The per-pass step is the group right after the whole module name, by every reader."""
    for info in (parse_xla_name(basename), _parse_by_patterns(basename)):
        assert info is not None and info.kind == "step"
        assert (info.name, info.xla_step, info.pipeline, info.pass_name) == (
            name, step, pipeline, pass_name)
    stem = basename.removesuffix(".txt").removesuffix(".hlo.pb")
    parts = split_pass_stem(stem)
    assert parts is not None
    assert parts[:4] == (f"module_000{basename[10]}.{name}", step, pipeline, pass_name)

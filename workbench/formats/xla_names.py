"""XLA dump file names: what each file is, from its name alone.

XLA names every file it dumps `[<timestamp>.]module_<NNNN>[.<name>].<suffix>` (see
`xla/service/dump.cc`); the suffix says what the file holds. Module names may contain dots
(TensorFlow's `cluster_0__...__.12`), so the suffix is matched from the right and the name is
what is left. Kernel artifacts (`.ll`, `.o`) carry a kernel name after the module name, which
is ambiguous on its own; `split_module_prefix` resolves it against names learned from the
unambiguous files.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

MODULE_RE = re.compile(r"^(?:(?P<ts>\d+)\.)?module_(?P<num>\d+)(?:\.(?P<rest>.*))?$")

# Per-pass dump: <step:04d>.<pipeline>.after_<pass>[.before_<next>].<ext>. The step is the
# last group that fits: a module name may itself end in a dot and four digits (PyTorch/XLA's
# `SyncTensorsGraph.1199`), and a pipeline name may start with `after_` (XLA CPU's
# `after_layout_assignment`), so the first fit can take the name's digits for the step.
_PER_PASS_RE = re.compile(
    r"^(?:(?P<name>.*)\.)?(?P<step>\d{4})\.(?P<pipeline>[^.]+)\.after_(?P<pass>.+?)"
    r"(?:\.before_(?P<next>.+?))?\.(?P<ext>txt|hlo\.pb|hlo\.pb\.gz|txt\.gz|html|dot|url|pbtxt)$"
)
_SNAPSHOT_RE = re.compile(r"^(?:(?P<name>.*?)\.)?snapshot\.(?P<n>-?\d+)\.pb$")
_EXECUTION_RE = re.compile(r"^(?:(?P<name>.*?)\.)?execution_(?P<n>\d+)\.hlo_snapshot\.pb$")
_BEFORE_RE = re.compile(
    r"^(?:(?P<name>.*?)\.)?before_optimizations"
    r"(?P<suffix>\.txt|\.hlo\.pb|\.hlo\.pb\.gz|\.txt\.gz|\.html|\.dot|\.url|\.pbtxt)$"
)
# The platform prefix: cpu_, sm_8.0_gpu_ (CUDA compute capability, may hold a dot),
# gfx90a_gpu_ (ROCm), or nothing.
_AFTER_RE = re.compile(
    r"^(?:(?P<name>.*?)\.)?(?P<platform>(?:sm_\d+(?:\.\d+)?[a-z]?_gpu_|gfx[0-9a-z]+_gpu_|"
    r"[a-z0-9]+_)?)after_optimizations(?P<suffix>[-.].*)$"
)
_AFTER_SUFFIX_KINDS = {
    ".txt": "text",
    ".txt.gz": "text",
    ".hlo.pb": "proto",
    ".hlo.pb.gz": "proto",
    "-buffer-assignment.txt": "buffer-assignment",
    "-buffer-assignment-values.txt": "buffer-assignment-values",
    "-memory-usage-report.txt": "memory-usage-report",
    "-memory-usage-report.pb": "memory-usage-report-proto",
    "-live-range.txt": "live-range",
    ".html": "html",
    ".dot": "dot",
    ".url": "url",
    ".pbtxt": "proto-text",
}
_RENDERING_KINDS = {".html": "html", ".dot": "dot", ".url": "url", ".pbtxt": "proto-text"}
_MLIR_TRACE_RE = re.compile(
    r"^(?:(?P<name>.*?)\.)?mlir-trace\.(?P<ext>pb|txt|pbtxt)$"
)
_DEBUG_OPTIONS_RE = re.compile(r"^(?:(?P<name>.*?)\.)?debug_options$")
# A module's other files, named `<module name>.<tail>`: the GPU compiler's (autotuning results,
# the target it compiled for, priority fusion's decisions, each thunk's metadata), the module's
# config, and the HLO dumped at two points of the GPU pipeline outside the per-pass numbering.
_NAMED_ARTIFACTS = {
    "autotune_results.pbtxt": "autotune-results",
    "gpu_target_config.pbtxt": "gpu-target-config",
    "priority_fusion_dump.txt": "priority-fusion-dump",
    "thunk_metadata.txt": "thunk-metadata",
    "thunk_sequence_after_thunk_passes.txt": "thunk-sequence-after-thunk-passes",
    "config.pbtxt": "module-config",
    "after_spmd_partitioner.txt": "after-spmd-partitioner",
    "after_spmd_partitioner.hlo.pb": "after-spmd-partitioner-proto",
    "before_config_assignment.txt": "before-config-assignment",
    "before_config_assignment.hlo.pb": "before-config-assignment-proto",
}
_NAMED_ARTIFACT_RE = re.compile(
    r"^(?:(?P<name>.*?)\.)?(?P<tail>" + "|".join(map(re.escape, _NAMED_ARTIFACTS)) + r")$"
)
# Files named after a kernel inside the module: the module name cannot be split off by shape.
_KERNEL_SUFFIXES = (
    (".ir-no-opt.ll", "llvm-ir-no-opt"),
    (".ir-with-opt.ll", "llvm-ir-with-opt"),
    (".ll", "llvm-ir"),
    (".o", "object-file"),
    (".ptx", "ptx"),
    (".thunk_sequence.txt", "thunk-sequence"),
    # XLA's MLIR kernel emitters (`--xla_dump_emitter_re`; TensorFlow's CPU dumps have hundreds)
    ("-pre-optimization.mlir", "emitter-pre-optimization"),
    ("-post-optimization.mlir", "emitter-post-optimization"),
    ("-post-lowering.mlir", "emitter-post-lowering"),
)
# Files in the per-module folder JAX's PJRT path writes: module_NNNN.<name>/<file>.
# Shardy's stage dumps: `<dump>/shardy/<module head>/NN.<stage>.mlir`.
SHARDY_FOLDER = "shardy"
SHARDY_STAGE_RE = re.compile(r"(?P<number>\d+)\.(?P<stage>[\w.-]+)\.mlir")

MODULE_FOLDER_FILES = {
    "module.mlir": "input",
    "compile_options.pb": "compile-options",
    "topology.pb": "topology",
    "compile_options.textproto": "compile-options",  # JAX 0.12 writes these as text
    "topology.textproto": "topology",
}


class XlaName(NamedTuple):
    """What one file name says.

    `kind` is one of: "step" (per-pass dump), "before", "after", "snapshot", "artifact",
    "mlir-trace", "kernel-artifact" (name still ambiguous, `rest` holds it), "unknown".
    `role` distinguishes text from proto for steps ("text" / "proto") and names the artifact
    kind otherwise. A NamedTuple, not a frozen dataclass: the index makes one per file it does
    not take by its fast path (tens of thousands in a large folder), and a frozen dataclass
    costs four times as much to build.
    """

    timestamp: str | None
    module_id: str
    kind: str
    role: str
    name: str | None = None
    rest: str = ""
    xla_step: int | None = None
    pipeline: str | None = None
    pass_name: str | None = None
    next_pass: str | None = None
    platform: str | None = None
    execution: str | None = None


def _step_role(ext: str) -> str:
    if ext.startswith("hlo.pb"):
        return "proto"
    if ext.startswith("txt"):
        return "text"
    return {"html": "html", "dot": "dot", "url": "url", "pbtxt": "proto-text"}[ext]


def parse_xla_name(basename: str) -> XlaName | None:
    """Classify one XLA dump file name; None when it is not a `module_NNNN` file at all.

    The answer of `_parse_by_patterns`, mostly from a table: a module's files share their
    module name and end in one of a few dozen tails, so when the name is plain (see
    `_is_plain`) the tail is read once for all modules (a large folder has tens of thousands
    of such names, and the patterns cost three times the lookup).
    """
    split = split_plain_name(basename)
    if split is not None:
        info = read_plain_name(*split)
        if info is not None:
            return info
    return _parse_by_patterns(basename)


def read_plain_name(timestamp: str | None, module_id: str, name: str,
                    tail: str) -> XlaName | None:
    """`parse_xla_name` of the name `split_plain_name` splits so, from the table; None when
    the tail reads differently after some plain names (then the patterns read it).

    The index reads the names after a module's first this way, without splitting them: they
    start as that one does."""
    read = _TAILS.get(tail)
    if read is None:
        read = _remember(_TAILS, tail, _read_tail(tail))
    if not read:
        return None
    kind, role, name_tail, rest_tail, *fields = read
    return XlaName(
        timestamp, module_id, kind, role,
        None if name_tail is None else name + name_tail,
        "" if rest_tail is None else name + rest_tail, *fields)


def split_plain_name(basename: str) -> tuple[str | None, str, str, str] | None:
    """(timestamp, module id, module name, tail) of `[<timestamp>.]module_<NNNN>.<name>.<tail>`
    as `MODULE_RE` splits it, when the name is plain; None otherwise (then the patterns
    read it)."""
    if "\n" in basename:  # `$` in the patterns matches before a final line break
        return None
    first, _, after_first = basename.partition(".")
    timestamp = None
    if first.isdecimal():
        timestamp = first
        first, _, after_first = after_first.partition(".")
    if not (first.startswith("module_") and first[7:].isdecimal()):
        return None
    name, dot, tail = after_first.partition(".")
    plain = _PLAIN_NAMES.get(name)
    if plain is None:
        plain = _remember(_PLAIN_NAMES, name, _is_plain(name))
    return (timestamp, first, name, tail) if plain and dot else None


# A module name that cannot change how the rest of a file name is read: the patterns below
# see it as the text before the first dot, and only these words (and a leading `sm_` or digit)
# in it could make one of them match differently.
_NAME_WORDS = ("after_", "before_", "snapshot", "execution_", "mlir-trace", "debug_options")
_PROBE_NAME = "probe"  # a plain name the tails are read with
_TABLE_LIMIT = 100_000  # entries per table: past it the table starts again
_PLAIN_NAMES: dict[str, bool] = {}
_TAILS: dict[str, tuple] = {}


def _is_plain(name: str) -> bool:
    return bool(name) and not name[0].isdecimal() and not name.startswith("sm_") and \
        not any(word in name for word in _NAME_WORDS)


def _remember(table: dict, key: str, value: Any) -> Any:
    if len(table) >= _TABLE_LIMIT:
        table.clear()
    table[key] = value
    return value


def _read_tail(tail: str) -> tuple:
    """How `module_0.<plain name>.<tail>` reads, with the name cut out of the name and rest
    fields (the part after it; None for a name of None or an empty rest); empty when a field
    holds something other than the name (a plain name rules that out: then the patterns
    decide)."""
    info = _parse_by_patterns(f"module_0.{_PROBE_NAME}.{tail}")
    if info is None:
        return ()
    name, rest = info.name, info.rest
    if (name is not None and not name.startswith(_PROBE_NAME)) or \
            (rest and not rest.startswith(_PROBE_NAME)):
        return ()
    cut = len(_PROBE_NAME)
    return (info.kind, info.role, None if name is None else name[cut:],
            rest[cut:] if rest else None, *info[6:])


def _parse_by_patterns(basename: str) -> XlaName | None:
    """`parse_xla_name` by its patterns, name by name."""
    match = MODULE_RE.match(basename)
    if match is None:
        return None
    ts = match["ts"]
    module_id = f"module_{match['num']}"
    rest = match["rest"] or ""

    # Cheap substring guards first: most names are tried against one pattern only.
    if ".after_" in rest and (m := _PER_PASS_RE.match(rest)):
        return XlaName(
            ts, module_id, "step", _step_role(m["ext"]), name=m["name"] or "",
            xla_step=int(m["step"]), pipeline=m["pipeline"], pass_name=m["pass"],
            next_pass=m["next"],
        )
    if "snapshot" in rest:
        if m := _SNAPSHOT_RE.match(rest):
            return XlaName(ts, module_id, "snapshot", "snapshot", name=m["name"] or "",
                           execution=f"snapshot.{m['n']}")
        if m := _EXECUTION_RE.match(rest):
            return XlaName(ts, module_id, "snapshot", "snapshot", name=m["name"] or "",
                           execution=f"execution_{m['n']}")
    if "before_optimizations" in rest and (m := _BEFORE_RE.match(rest)):
        suffix = m["suffix"]
        if suffix in _RENDERING_KINDS:
            return XlaName(ts, module_id, "artifact", _RENDERING_KINDS[suffix],
                           name=m["name"] or "")
        role = "proto" if suffix.startswith(".hlo.pb") else "text"
        return XlaName(ts, module_id, "before", role, name=m["name"] or "")
    if "after_optimizations" in rest and (m := _AFTER_RE.match(rest)):
        after_role = _AFTER_SUFFIX_KINDS.get(m["suffix"])
        if after_role is not None:
            platform = m["platform"].rstrip("_") or None
            kind = "after" if after_role in ("text", "proto") else "artifact"
            return XlaName(ts, module_id, kind, after_role, name=m["name"] or "",
                           platform=platform)
    if "mlir-trace" in rest and (m := _MLIR_TRACE_RE.match(rest)):
        return XlaName(ts, module_id, "mlir-trace", m["ext"], name=m["name"] or "")
    if rest.endswith("debug_options") and (m := _DEBUG_OPTIONS_RE.match(rest)):
        return XlaName(ts, module_id, "artifact", "debug-options", name=m["name"] or "")
    if (m := _NAMED_ARTIFACT_RE.match(rest)) is not None:
        return XlaName(ts, module_id, "artifact", _NAMED_ARTIFACTS[m["tail"]],
                       name=m["name"] or "")
    for suffix, role in _KERNEL_SUFFIXES:
        if rest.endswith(suffix):
            return XlaName(ts, module_id, "kernel-artifact", role, rest=rest[: -len(suffix)])
    return XlaName(ts, module_id, "unknown", "other", rest=rest)


def split_module_prefix(rest: str, known_names: set[str]) -> str | None:
    """The module name at the start of `rest` (e.g. `jit_ln.obj-file.fusion`), or None.

    Picks the longest known name followed by a dot, so `cluster_0__.12` wins over `cluster_0__`.
    """
    best = None
    for name in known_names:
        fits = rest == name or rest.startswith(name + ".")
        if fits and (best is None or len(name) > len(best)):
            best = name
    return best


# A per-pass dump name without its extension, `<head>.<step:04d>.<pipeline>.after_<pass>
# [.before_<next>]`: the definition `split_pass_stem` follows by faster means. The head is the
# longest that fits (see `_PER_PASS_RE`).
_PASS_STEM_RE = re.compile(r"(.*)\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_(.+?))?")

# (head, xla_step, pipeline, pass_name, next_pass); the head, `[<timestamp>.]module_<NNNN>
# [.<name>]` in a real dump, is not validated.
PassStem = tuple[str, int, str, str, "str | None"]


def split_pass_stem(stem: str) -> PassStem | None:
    """Split a per-pass dump name without its extension; None when it has another shape.

    The answer of `_PASS_STEM_RE`, whose head is the longest that fits: it ends at the last
    `.after_` when a step number and a pipeline name come before that, which is what string
    methods check here at a quarter of the regex's cost (the index splits every per-pass step
    of a folder, tens of thousands). So `module_0000.SyncTensorsGraph.1199.0046.after_layout_
    assignment.after_pipeline-start` is step 46 of `SyncTensorsGraph.1199`, not step 1199.
    Other names (rare) are left to the regex, as are names with a line break, which the
    regex's `.` does not match. A plain tuple, not a NamedTuple, for the same reason.
    """
    before_after, _, tail = stem.rpartition(".after_")
    rest, _, pipeline = before_after.rpartition(".")
    head, dot, step = rest.rpartition(".")
    if not (dot and pipeline and tail and len(step) == 4 and step.isdecimal()) or "\n" in stem:
        match = _PASS_STEM_RE.fullmatch(stem)
        if match is None:
            return None
        return match[1], int(match[2]), match[3], match[4], match[5]
    # The pass name is the shortest that fits too: up to the first `.before_` (from its second
    # character on) with a name after it.
    cut = tail.find(".before_", 1)
    if cut != -1 and cut + len(".before_") < len(tail):
        return head, int(step), pipeline, tail[:cut], tail[cut + len(".before_") :]
    return head, int(step), pipeline, tail, None


# A per-pass order key: (xla_step, pipeline, pass_name, next_pass or "").
PassKey = tuple[int, str, str, str]
_PASS_SUFFIXES: dict[str, PassKey | None] = {}


def split_pass_suffix(suffix: str) -> PassKey | None:
    """The order key of every per-pass name `<head>.<suffix>` (without its extension) whose
    head holds neither `.after_` nor a line break, as `split_pass_stem` splits them; None when
    the split could depend on the head (then split the whole name).

    The split is at the name's last `.after_`, so a suffix of the shape
    `<step:04d>.<pipeline>.after_<pass>[.before_<next>]` whose last `.after_` is the one after
    its pipeline reads the same after any such head: the
    index reads it once for all the modules of a folder (each runs the same passes), not once
    per file.
    """
    key = _PASS_SUFFIXES.get(suffix)
    if key is None and suffix not in _PASS_SUFFIXES:
        key = _remember(_PASS_SUFFIXES, suffix, _read_pass_suffix(suffix))
    return key


def _read_pass_suffix(suffix: str) -> PassKey | None:
    if "/" in suffix or "\n" in suffix:
        return None
    before, _, tail = suffix.rpartition(".after_")
    step, dot, pipeline = before.partition(".")
    if not (dot and pipeline and tail and "." not in pipeline and len(step) == 4 and
            step.isdecimal()):
        return None
    parts = split_pass_stem(f"{_PROBE_NAME}.{suffix}")
    assert parts is not None and parts[0] == _PROBE_NAME  # the shape just checked
    return parts[1], parts[2], parts[3], parts[4] or ""

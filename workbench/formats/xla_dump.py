"""Assemble XLA dump files into modules, from names only (no file is opened).

A module's timeline: `module.mlir` (the StableHLO JAX handed to XLA, when the PJRT folder is
there), `before_optimizations`, the per-pass steps in XLA step order, then
`<platform>_after_optimizations`.

Modules are grouped by (folder, timestamp prefix, module id): the same `module_0000` in two
sub-folders, or from two timestamped runs, are different modules.

Speed matters here (a 100,000-file folder must index in about the time `find` lists it):
per-pass step files, three quarters of a typical dump, come in text/proto pairs whose name
without the extension is split once for both, by string methods, and each module head is
validated once per module, not once per file. The paths may come in any order (sorting
100,000 names would cost a tenth of the index): where two names compete for one place, the
outcome is the one a sorted listing gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter, itemgetter

from workbench.formats.xla_names import (
    MODULE_FOLDER_FILES,
    MODULE_RE,
    parse_xla_name,
    split_module_prefix,
    split_pass_stem,
)
from workbench.model import Artifact, Dump, Execution, Module, Source, Step

# Timeline order: input, before_optimizations, per-pass steps, after_optimizations.
_INPUT, _BEFORE, _PASS, _AFTER = 0, 1, 2, 3
# Per-pass steps are ordered by (xla_step, pipeline, pass_name, next_pass or ""): keys that
# start with an int sort fast (list.sort compares those first elements natively).
_BY_KEY = itemgetter(0)
# A step entry is [pass_name, kind, ir, pipeline, next_pass, xla_step, text, proto]; the
# positions of its text and proto paths:
_TEXT, _PROTO = 6, 7
_UNSEEN = object()
_BY_FILE = attrgetter("file")


@dataclass
class _PendingModule:
    folder: str
    timestamp: str | None
    module_id: str
    names: set[str] = field(default_factory=set)
    # (_INPUT,), (_BEFORE,) or (_AFTER, platform) -> step entry
    ends: dict[tuple, list] = field(default_factory=dict)
    # per-pass order key -> step entry
    passes: dict[tuple, list] = field(default_factory=dict)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    kernel_files: list[tuple[str, str, str]] = field(default_factory=list)
    # step entries of the per-pass text/proto pairs
    pass_steps: list[list] = field(default_factory=list)


def _keep_last(entry: list, slot: int, path: str) -> None:
    """Put `path` in `entry[slot]` unless a name that sorts after it is there: when two files
    name the same step (`.txt` and `.txt.gz`), the last in a sorted listing wins."""
    if entry[slot] is None or path > entry[slot]:
        entry[slot] = path


def _first_file(entry: list) -> str:
    """The name a sorted listing shows first of a per-pass pair (`.hlo.pb` sorts before
    `.txt`)."""
    return entry[_PROTO] or entry[_TEXT]


def claim_xla(paths: list[str], dump: Dump) -> list[str]:
    """Add the XLA modules found among `paths` (in any order) to `dump`; return the paths not
    claimed, in their order."""
    pending: dict[tuple[str, str | None, str], _PendingModule] = {}
    unclaimed: list[str] = []

    def module_for(folder: str, timestamp: str | None, module_id: str) -> _PendingModule:
        key = (folder, timestamp, module_id)
        module = pending.get(key)
        if module is None:
            module = pending[key] = _PendingModule(folder, timestamp, module_id)
        return module

    # (folder, module head) -> module, or None when the head is not an XLA module name.
    by_head: dict[tuple[str, str], _PendingModule | None] = {}

    def pass_step(folder: str, stem: str) -> list | None:
        """The step entry for a per-pass dump named `stem` + extension, None for other names."""
        parts = split_pass_stem(stem)
        if parts is None:
            return None
        module_head, xla_step, pipeline, pass_name, next_pass = parts
        head_key = (folder, module_head)
        module = by_head.get(head_key, _UNSEEN)
        if module is _UNSEEN:
            head = MODULE_RE.fullmatch(module_head)
            module = by_head[head_key] = None if head is None else module_for(
                folder, head["ts"], f"module_{head['num']}")
            if module is not None:
                module.names.add(head["rest"] or "")
        if module is None:
            return None
        entry = [pass_name, "pass", "hlo", pipeline, next_pass, xla_step, None, None]
        module.pass_steps.append(entry)
        return entry

    # Path without its extension -> step entry, or None when it is not a per-pass name.
    pass_steps: dict[str, list | None] = {}
    for path in paths:
        folder, _, basename = path.rpartition("/")
        if ".after_" in basename:
            if basename.endswith(".txt"):
                stem_path, slot = path[:-4], _TEXT
            elif basename.endswith(".hlo.pb"):
                stem_path, slot = path[:-7], _PROTO
            else:
                stem_path = None
            if stem_path is not None:
                entry = pass_steps.get(stem_path, _UNSEEN)
                if entry is _UNSEEN:
                    stem = stem_path[len(folder) + 1 :] if folder else stem_path
                    entry = pass_steps[stem_path] = pass_step(folder, stem)
                if entry is not None:
                    entry[slot] = path
                    continue

        if basename in MODULE_FOLDER_FILES:
            parent_folder, _, parent = folder.rpartition("/")
            head = MODULE_RE.match(parent)
            if head is not None:
                module = module_for(parent_folder, head["ts"], f"module_{head['num']}")
                if head["rest"]:
                    module.names.add(head["rest"])
                role = MODULE_FOLDER_FILES[basename]
                if role == "input":
                    entry = module.ends.setdefault(
                        (_INPUT,), ["input", "input", "mlir", None, None, None, None, None])
                    _keep_last(entry, _TEXT, path)
                else:
                    module.artifacts.append(Artifact(kind=role, file=path))
                continue

        info = parse_xla_name(basename)
        if info is None or info.kind == "unknown":
            unclaimed.append(path)
            continue
        module = module_for(folder, info.timestamp, info.module_id)
        if info.name is not None:
            module.names.add(info.name)
        if info.kind == "step":  # per-pass names the fast path did not take (.gz, renderings)
            if info.role in ("text", "proto"):
                key = (info.xla_step, info.pipeline, info.pass_name, info.next_pass or "")
                entry = module.passes.setdefault(key, [info.pass_name, "pass", "hlo",
                                                       info.pipeline, info.next_pass,
                                                       info.xla_step, None, None])
                _keep_last(entry, _TEXT if info.role == "text" else _PROTO, path)
            else:
                module.artifacts.append(Artifact(kind=info.role, file=path,
                                                 label=f"{info.xla_step:04d} {info.pass_name}"))
        elif info.kind in ("before", "after"):
            if info.kind == "before":
                key, label = (_BEFORE,), "before_optimizations"
            else:
                prefix = f"{info.platform}_" if info.platform else ""
                key, label = (_AFTER, info.platform or ""), f"{prefix}after_optimizations"
            entry = module.ends.setdefault(key, [label, info.kind, "hlo", info.platform,
                                                 None, None, None, None])
            _keep_last(entry, _TEXT if info.role == "text" else _PROTO, path)
        elif info.kind == "snapshot":
            module.executions.append(Execution(id=info.execution or "", file=path))
        elif info.kind == "artifact":
            module.artifacts.append(Artifact(kind=info.role, file=path))
        elif info.kind == "mlir-trace":
            module.artifacts.append(Artifact(kind="mlir-trace", file=path))
        else:  # kernel artifacts: the kernel name is split off once all names are known
            module.kernel_files.append((path, info.role, info.rest))

    for module in pending.values():
        _add_pass_steps(module)
        for path, role, rest in module.kernel_files:
            name = split_module_prefix(rest, module.names)
            label = rest[len(name) + 1 :] if name else rest
            module.artifacts.append(Artifact(kind=role, file=path, label=label))
        dump.modules.append(_finish(module))
    return unclaimed


def _add_pass_steps(module: _PendingModule) -> None:
    """Merge the per-pass pairs into the module's steps as a sorted listing would have them.

    A step some other file names too (`.txt.gz`, found by `parse_xla_name`) keeps that file
    and takes from the pair only what it lacks. Pairs that name the same step (one module id
    under two module names) merge in the order of their first file: the earlier's files
    first, the later's filling the gaps.
    """
    merged: dict[tuple, list] = {}
    for entry in module.pass_steps:
        pass_name, _, _, pipeline, next_pass, xla_step, _, _ = entry
        if merged.setdefault((xla_step, pipeline, pass_name, next_pass or ""),
                             entry) is not entry:
            break
    else:
        _fill_steps(module.passes, merged)
        return
    merged = {}
    for entry in sorted(module.pass_steps, key=_first_file):
        pass_name, _, _, pipeline, next_pass, xla_step, _, _ = entry
        known = merged.setdefault((xla_step, pipeline, pass_name, next_pass or ""), entry)
        if known is not entry:
            known[_TEXT] = known[_TEXT] or entry[_TEXT]
            known[_PROTO] = known[_PROTO] or entry[_PROTO]
    _fill_steps(module.passes, merged)


def _fill_steps(passes: dict[tuple, list], pairs: dict[tuple, list]) -> None:
    """Add the steps of `pairs` to `passes`; where a key is in both, fill only missing files."""
    for key, entry in pairs.items():
        known = passes.setdefault(key, entry)
        if known is not entry:
            known[_TEXT] = known[_TEXT] or entry[_TEXT]
            known[_PROTO] = known[_PROTO] or entry[_PROTO]


def _finish(pending: _PendingModule) -> Module:
    # Several names under one id happen only when runs share a folder without timestamps;
    # the shortest is the module's own name.
    names = pending.names - {""}
    name = min(names, key=lambda n: (len(n), n)) if names else ""
    key = pending.module_id
    if pending.timestamp:
        key = f"{pending.timestamp}.{key}"
    if pending.folder:
        key = f"{pending.folder}/{key}"
    module = Module(id=pending.module_id, name=name, format="xla", key=key)
    ends = sorted(pending.ends.items())
    timeline = [entry for order, entry in ends if order[0] < _PASS]
    timeline += [entry for _, entry in sorted(pending.passes.items(), key=_BY_KEY)]
    timeline += [entry for order, entry in ends if order[0] > _PASS]
    steps = module.steps
    for index, entry in enumerate(timeline):
        pass_name, kind, ir, pipeline, next_pass, xla_step, text, proto = entry
        steps.append(Step(
            index, pass_name, ir, kind,
            Source(text) if text else None,
            Source(proto) if proto else None,
            pipeline, next_pass, xla_step,
        ))
    module.executions = sorted(pending.executions, key=_BY_FILE)
    module.artifacts = sorted(pending.artifacts, key=_BY_FILE)
    return module

"""Assemble XLA dump files into modules, from names only (no file is opened).

A module's timeline: `module.mlir` (the StableHLO JAX handed to XLA, when the PJRT folder is
there), `before_optimizations`, the per-pass steps in XLA step order, then
`<platform>_after_optimizations`.

Modules are grouped by (folder, timestamp prefix, module id): the same `module_0000` in two
sub-folders, or from two timestamped runs, are different modules.

Speed matters here (a 100,000-file folder must index in about the time `find` lists it), so
per-pass step files, three quarters of a typical dump, take a single-regex fast path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.formats.xla_names import (
    MODULE_FOLDER_FILES,
    MODULE_RE,
    parse_xla_name,
    split_module_prefix,
)
from workbench.model import Artifact, Dump, Execution, Module, Source, Step

# The common case of parse_xla_name's per-pass pattern in one match. Group 1 is the module
# head `[<timestamp>.]module_<NNNN>[.<name>]`, validated once per module, not once per file.
_FAST_STEP_RE = re.compile(
    r"(.*?)\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_(.+?))?\.(txt|hlo\.pb)"
)

# Timeline order: input, before_optimizations, per-pass steps, after_optimizations.
_INPUT, _BEFORE, _PASS, _AFTER = 0, 1, 2, 3


@dataclass
class _PendingModule:
    folder: str
    timestamp: str | None
    module_id: str
    names: set[str] = field(default_factory=set)
    # order key -> [pass_name, kind, ir, pipeline, next_pass, xla_step, text, proto]
    steps: dict[tuple, list] = field(default_factory=dict)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    kernel_files: list[tuple[str, str, str]] = field(default_factory=list)
    # per-pass files found by the fast path: name without extension -> [match, text, proto]
    fast_steps: dict[str, list] = field(default_factory=dict)


def claim_xla(paths: list[str], dump: Dump) -> list[str]:
    """Add the XLA modules found among `paths` to `dump`; return the paths not claimed."""
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
    fast_step = _FAST_STEP_RE.fullmatch
    for path in paths:
        folder, _, basename = path.rpartition("/")
        fast = fast_step(basename) if ".after_" in basename else None
        if fast is not None:
            head_key = (folder, fast.group(1))
            module = by_head.get(head_key, False)
            if module is False:
                head = MODULE_RE.fullmatch(fast.group(1))
                module = by_head[head_key] = None if head is None else module_for(
                    folder, head["ts"], f"module_{head['num']}")
                if module is not None:
                    module.names.add(head["rest"] or "")
            if module is not None:
                ext_start = fast.start(6)
                key = basename[:ext_start]
                entry = module.fast_steps.get(key)
                if entry is None:
                    entry = module.fast_steps[key] = [fast, None, None]
                entry[1 if basename[ext_start] == "t" else 2] = path
                continue

        parent_folder, _, parent = folder.rpartition("/")
        if basename in MODULE_FOLDER_FILES and MODULE_RE.match(parent):
            info = parse_xla_name(parent)
            assert info is not None  # MODULE_RE matched
            module = module_for(parent_folder, info.timestamp, info.module_id)
            match = MODULE_RE.match(parent)
            if match and match["rest"]:
                module.names.add(match["rest"])
            role = MODULE_FOLDER_FILES[basename]
            if role == "input":
                module.steps[(_INPUT,)] = ["input", "input", "mlir", None, None, None, path, None]
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
                key = (_PASS, info.xla_step, info.pipeline, info.pass_name, info.next_pass or "")
                entry = module.steps.setdefault(key, [info.pass_name, "pass", "hlo",
                                                      info.pipeline, info.next_pass,
                                                      info.xla_step, None, None])
                entry[6 if info.role == "text" else 7] = path
            else:
                module.artifacts.append(Artifact(kind=info.role, file=path,
                                                 label=f"{info.xla_step:04d} {info.pass_name}"))
        elif info.kind in ("before", "after"):
            if info.kind == "before":
                key, label = (_BEFORE,), "before_optimizations"
            else:
                prefix = f"{info.platform}_" if info.platform else ""
                key, label = (_AFTER, info.platform or ""), f"{prefix}after_optimizations"
            entry = module.steps.setdefault(key, [label, info.kind, "hlo", info.platform,
                                                  None, None, None, None])
            entry[6 if info.role == "text" else 7] = path
        elif info.kind == "snapshot":
            module.executions.append(Execution(id=info.execution or "", file=path))
        elif info.kind == "artifact":
            module.artifacts.append(Artifact(kind=info.role, file=path))
        elif info.kind == "mlir-trace":
            module.artifacts.append(Artifact(kind="mlir-trace", file=path))
        else:  # kernel artifacts: the kernel name is split off once all names are known
            module.kernel_files.append((path, info.role, info.rest))

    for module in pending.values():
        for fast, text, proto in module.fast_steps.values():
            _, step, pipeline, pass_name, next_pass, _ = fast.groups()
            key = (_PASS, int(step), pipeline, pass_name, next_pass or "")
            entry = module.steps.setdefault(
                key, [pass_name, "pass", "hlo", pipeline, next_pass, int(step), None, None])
            entry[6] = entry[6] or text
            entry[7] = entry[7] or proto
        for path, role, rest in module.kernel_files:
            name = split_module_prefix(rest, module.names)
            label = rest[len(name) + 1 :] if name else rest
            module.artifacts.append(Artifact(kind=role, file=path, label=label))
        dump.modules.append(_finish(module))
    return unclaimed


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
    steps = module.steps
    for index, order in enumerate(sorted(pending.steps)):
        pass_name, kind, ir, pipeline, next_pass, xla_step, text, proto = pending.steps[order]
        steps.append(Step(
            index, pass_name, ir, kind,
            Source(text) if text else None,
            Source(proto) if proto else None,
            pipeline, next_pass, xla_step,
        ))
    module.executions = sorted(pending.executions, key=lambda e: e.file)
    module.artifacts = sorted(pending.artifacts, key=lambda a: a.file)
    return module

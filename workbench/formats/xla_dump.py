"""Assemble XLA dump files into modules, from names only (no file is opened).

A module's timeline: `module.mlir` (the StableHLO JAX handed to XLA, when the PJRT folder is
there), `before_optimizations`, the per-pass steps in XLA step order, then
`<platform>_after_optimizations`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from workbench.formats.xla_names import (
    MODULE_FOLDER_FILES,
    MODULE_RE,
    XlaName,
    parse_xla_name,
    split_module_prefix,
)
from workbench.model import Artifact, Dump, Execution, Module, Source, Step


@dataclass
class _PendingStep:
    order: tuple
    pass_name: str
    kind: str
    ir: str
    pipeline: str | None = None
    next_pass: str | None = None
    xla_step: int | None = None
    text: str | None = None
    proto: str | None = None


@dataclass
class _PendingModule:
    timestamp: str | None
    module_id: str
    names: set[str] = field(default_factory=set)
    steps: dict[tuple, _PendingStep] = field(default_factory=dict)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    kernel_files: list[tuple[str, XlaName]] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)


def _step_key(info: XlaName) -> tuple:
    if info.kind == "step":
        return (2, info.xla_step, info.pipeline, info.pass_name, info.next_pass)
    if info.kind == "before":
        return (1, 0, "", "", "")
    return (3, 0, info.platform or "", "", "")


def claim_xla(paths: list[str], dump: Dump) -> list[str]:
    """Add the XLA modules found among `paths` to `dump`; return the paths not claimed."""
    pending: dict[tuple[str | None, str], _PendingModule] = {}
    unclaimed: list[str] = []
    folder_files: list[tuple[str, str, str]] = []  # (path, folder basename, file basename)

    for path in paths:
        directory, basename = posixpath.split(path)
        parent = posixpath.basename(directory)
        if basename in MODULE_FOLDER_FILES and MODULE_RE.match(parent):
            folder_files.append((path, parent, basename))
            continue
        info = parse_xla_name(basename)
        if info is None or info.kind == "unknown":
            unclaimed.append(path)
            continue
        key = (info.timestamp, info.module_id)
        module = pending.get(key)
        if module is None:
            module = pending[key] = _PendingModule(info.timestamp, info.module_id)
        if info.name is not None:
            module.names.add(info.name)
        if info.kind in ("step", "before", "after"):
            _add_step(module, info, path)
        elif info.kind == "snapshot":
            module.executions.append(Execution(id=info.execution or "", file=path))
        elif info.kind == "artifact":
            module.artifacts.append(Artifact(kind=info.role, file=path))
        elif info.kind == "mlir-trace":
            module.traces.append(path)
        else:  # kernel artifacts: name resolved once all names are known
            module.kernel_files.append((path, info))

    for path, folder, basename in folder_files:
        info = parse_xla_name(folder)
        assert info is not None  # MODULE_RE matched the folder name above
        module = pending.get((info.timestamp, info.module_id))
        if module is None:
            module = pending[(info.timestamp, info.module_id)] = _PendingModule(
                info.timestamp, info.module_id
            )
        match = MODULE_RE.match(folder)
        if match and match["rest"]:
            module.names.add(match["rest"])
        role = MODULE_FOLDER_FILES[basename]
        if role == "input":
            module.steps[(0, 0, "", "", "")] = _PendingStep(
                order=(0,), pass_name="input", kind="input", ir="mlir", text=path
            )
        else:
            module.artifacts.append(Artifact(kind=role, file=path))

    for module in pending.values():
        for path, info in module.kernel_files:
            # The kernel name follows the module name; it is kept in the artifact's label.
            name = split_module_prefix(info.rest, module.names)
            label = info.rest[len(name) + 1 :] if name else info.rest
            module.artifacts.append(Artifact(kind=info.role, file=path, label=label))
        for path in module.traces:
            module.artifacts.append(Artifact(kind="mlir-trace", file=path))
        dump.modules.append(_finish(module))
    return unclaimed


def _add_step(module: _PendingModule, info: XlaName, path: str) -> None:
    key = _step_key(info)
    step = module.steps.get(key)
    if step is None:
        if info.kind == "step":
            step = _PendingStep(key, info.pass_name or "", "pass", "hlo", info.pipeline,
                                info.next_pass, info.xla_step)
        elif info.kind == "before":
            step = _PendingStep(key, "before_optimizations", "before", "hlo")
        else:
            prefix = f"{info.platform}_" if info.platform else ""
            step = _PendingStep(key, f"{prefix}after_optimizations", "after", "hlo",
                                pipeline=info.platform)
        module.steps[key] = step
    if info.role == "text":
        step.text = path
    elif info.role == "proto":
        step.proto = path


def _finish(pending: _PendingModule) -> Module:
    # Several names for one id happen only when runs share a folder; the shortest is the module's
    # own name (longer ones are kernel-qualified names of the same module).
    name = min(pending.names, key=lambda n: (len(n), n)) if pending.names else ""
    module_id = pending.module_id
    key = f"{pending.timestamp}.{module_id}" if pending.timestamp else module_id
    module = Module(id=module_id, name=name, format="xla", key=key)
    for index, key in enumerate(sorted(pending.steps)):
        p = pending.steps[key]
        module.steps.append(
            Step(
                index=index,
                pass_name=p.pass_name,
                ir=p.ir,  # type: ignore[arg-type]
                kind=p.kind,
                text=Source(p.text) if p.text else None,
                proto=Source(p.proto) if p.proto else None,
                pipeline=p.pipeline,
                next_pass=p.next_pass,
                xla_step=p.xla_step,
            )
        )
    module.executions = sorted(pending.executions, key=lambda e: e.file)
    module.artifacts = sorted(pending.artifacts, key=lambda a: a.file)
    return module

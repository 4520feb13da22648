"""Every `--json` shape the commands print, built in one place from the model and outcomes.

The shapes are the documented ones (README); a change to a shape is a change here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _encode

from workbench.model import Dump, Module, Step

# --- ls ---------------------------------------------------------------------------------
# `ls --json` is written as it is built, one module at a time: the text is exactly
# `json.dumps(dump_json(dump))` (the test suite checks it), made without the dicts.

_json_scalar = json.JSONEncoder().encode


def module_json(module: Module) -> dict:
    """The JSON shape scripts rely on (documented in the README)."""
    return {
        "id": module.id,
        "key": module.key,
        "name": module.name,
        "format": module.format,
        "steps": [
            {
                "index": step.index,
                "pass": step.pass_name,
                "pipeline": step.pipeline,
                "xla_step": step.xla_step,
                "file": step.file,
                "changed": step.changed,
                "kind": step.kind,
                "ir": step.ir,
                "scope": step.scope,
                "target": step.target,
                "argument": step.argument,
                "options": step.options,
                "pair": step.pair,
                "timing_s": step.timing_s,
            }
            for step in module.steps
        ],
        "executions": [
            {"id": execution.id, "file": execution.file, "kind": execution.kind}
            for execution in module.executions
        ],
        "artifacts": [
            {"kind": artifact.kind, "file": artifact.file, "label": artifact.label}
            for artifact in module.artifacts
        ],
    }


def dump_json(dump: Dump) -> dict:
    return {
        "root": str(dump.root),
        "modules": [module_json(module) for module in dump.modules],
        "problems": [{"file": p.file, "reason": p.reason} for p in dump.problems],
        "others": dump.others,
    }


def _value(value: object) -> str:
    """One JSON scalar as `json.dumps` writes it."""
    return _json_scalar(value) if value is not None else "null"


_STEP = (
    '{"index": %d, "pass": %s, "pipeline": %s, "xla_step": %s, "file": %s, "changed": %s, '
    '"kind": %s, "ir": %s, "scope": %s, "target": %s, "argument": %s, "options": %s, '
    '"pair": %s, "timing_s": %s}'
)
# The same with the fields XLA steps leave None (most steps of a large dump) written in.
_PLAIN_STEP = (
    '{"index": %d, "pass": %s, "pipeline": %s, "xla_step": %s, "file": %s, "changed": null, '
    '"kind": %s, "ir": %s, "scope": null, "target": null, "argument": null, "options": null, '
    '"pair": null, "timing_s": null}'
)


def _step_text(step: Step) -> str:
    pipeline, xla_step, file = step.pipeline, step.xla_step, step.file
    if step.changed is None and step.scope is None and step.target is None and \
            step.argument is None and step.options is None and step.pair is None and \
            step.timing_s is None:
        return _PLAIN_STEP % (
            step.index, _encode(step.pass_name),
            "null" if pipeline is None else _encode(pipeline),
            "null" if xla_step is None else int.__repr__(xla_step),
            "null" if file is None else _encode(file), _encode(step.kind), _encode(step.ir),
        )
    return _STEP % (
        step.index, _encode(step.pass_name), _value(pipeline), _value(xla_step),
        _value(file), _value(step.changed), _encode(step.kind), _encode(step.ir),
        _value(step.scope), _value(step.target), _value(step.argument), _value(step.options),
        _value(step.pair), _value(step.timing_s),
    )


def module_json_text(module: Module) -> str:
    """`json.dumps(module_json(module))`, made directly."""
    executions = ", ".join([
        f'{{"id": {_encode(e.id)}, "file": {_encode(e.file)}, "kind": {_encode(e.kind)}}}'
        for e in module.executions])
    artifacts = ", ".join([
        f'{{"kind": {_encode(a.kind)}, "file": {_encode(a.file)}, "label": {_encode(a.label)}}}'
        for a in module.artifacts])
    return (
        f'{{"id": {_encode(module.id)}, "key": {_encode(module.key)}, '
        f'"name": {_encode(module.name)}, "format": {_encode(module.format)}, '
        f'"steps": [{", ".join([_step_text(step) for step in module.steps])}], '
        f'"executions": [{executions}], "artifacts": [{artifacts}]}}'
    )


def write_dump_json(dump: Dump, write: Callable[[str], object]) -> None:
    """Write `json.dumps(dump_json(dump))` with `write`, a module at a time."""
    write(f'{{"root": {_encode(str(dump.root))}, "modules": [')
    for number, module in enumerate(dump.modules):
        write(module_json_text(module) if number == 0 else ", " + module_json_text(module))
    problems = ", ".join([f'{{"file": {_encode(p.file)}, "reason": {_encode(p.reason)}}}'
                          for p in dump.problems])
    others = ", ".join([_encode(other) for other in dump.others])
    write(f'], "problems": [{problems}], "others": [{others}]}}')

# --- show, diff -------------------------------------------------------------------------

# --- replay, bisect, triage, mlir-replay ------------------------------------------------

# --- actions, report, iree --------------------------------------------------------------

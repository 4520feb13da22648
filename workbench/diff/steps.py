"""Diffs between steps of a module's timeline, and the per-step `changed` flags.

Normalized texts are cached (bounded, keyed by file, range, size and mtime), so walking a
timeline or diffing neighbouring steps normalizes every step once.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from workbench.diff.ir_diff import IRDiff, diff_normalized, same_ir
from workbench.diff.normalize import NormalizedText, NormalizeOptions, TextKind, normalize
from workbench.loader import ReadError, read_text
from workbench.model import Module, Source, Step

_CACHE_SIZE = 64
_cache: OrderedDict[tuple, NormalizedText] = OrderedDict()


def find_step(module: Module, spec: str) -> Step:
    """A step by timeline index (`3`), XLA step number (`0028`, four digits) or pass name.

    Raises KeyError with the choices when the spec is unknown or ambiguous.
    """
    steps = module.steps
    if spec.isdigit():
        if len(spec) == 4:
            found = [s for s in steps if s.xla_step == int(spec)]
            if len(found) == 1:
                return found[0]
        index = int(spec)
        if len(spec) != 4 and 0 <= index < len(steps):
            return steps[index]
        raise KeyError(f"no step {spec!r} in {module.key} (timeline indices 0-{len(steps) - 1}"
                       + (", XLA steps are four digits like 0028" if len(spec) != 4 else "")
                       + ")")
    found = [s for s in steps if s.pass_name == spec]
    if not found:
        found = [s for s in steps if spec in (s.label, f"{s.pipeline}.{s.pass_name}")]
    if len(found) == 1:
        return found[0]
    if found:
        listed = ", ".join(f"{s.index} ({s.label}{', ' + s.pipeline if s.pipeline else ''})"
                           for s in found)
        raise KeyError(f"pass name {spec!r} is ambiguous in {module.key}: {listed}; "
                       f"give a timeline index or an XLA step number")
    known = ", ".join(sorted({s.pass_name for s in steps})[:30])
    raise KeyError(f"no step {spec!r} in {module.key}; passes: {known}")


def step_source(step: Step) -> Source:
    if step.text is None:
        raise ReadError(step.file or step.pass_name,
                        "this step has no text dump (only a proto); diff needs the text")
    return step.text


def load_normalized(root: Path, source: Source, kind: TextKind | None = None,
                    options: NormalizeOptions | None = None) -> NormalizedText:
    """The normalized text of `source` (cached; raises ReadError)."""
    options = options or NormalizeOptions()
    path = root / source.file
    try:
        stat = os.stat(path)
        key: tuple = (str(path), source.start, source.end, source.entry, stat.st_size,
                      stat.st_mtime_ns, kind, options)
    except OSError:
        key = ()
    if key and key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    normalized = normalize(read_text(root, source), kind, options)
    if key:
        _cache[key] = normalized
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return normalized


def diff_steps(root: Path, a: Step, b: Step, options: NormalizeOptions | None = None) -> IRDiff:
    """Diff the IR of two steps (raises ReadError when a step's text cannot be read)."""
    kind: TextKind | None = a.ir if a.ir == b.ir else None
    return diff_normalized(load_normalized(root, step_source(a), kind, options),
                           load_normalized(root, step_source(b), kind, options))


def iter_changed(root: Path, module: Module, options: NormalizeOptions | None = None
                 ) -> Iterator[tuple[Step, bool | None]]:
    """Each step of `module` with whether its IR differs from the previous step's, as it goes
    (a UI streams the flags into its timeline; `mark_changed` stores them).

    None for the first step, steps after a change of IR kind (module.mlir -> HLO), and steps
    whose text cannot be read. Byte-identical texts are decided without normalizing.
    """
    previous: Step | None = None
    previous_text: str | None = None
    for step in module.steps:
        changed: bool | None = None
        try:
            text = read_text(root, step_source(step))
        except ReadError:
            previous, previous_text = None, None
            yield step, None
            continue
        if previous is not None and previous_text is not None and previous.ir == step.ir:
            if text == previous_text:
                changed = False
            else:
                try:
                    before = load_normalized(root, step_source(previous), previous.ir, options)
                    after = load_normalized(root, step_source(step), step.ir, options)
                    changed = not same_ir(before, after)
                except ReadError:
                    changed = None
        previous, previous_text = step, text
        yield step, changed


def mark_changed(root: Path, module: Module, options: NormalizeOptions | None = None) -> None:
    """Fill `Step.changed` for every step: did its IR differ from the previous step's?

    See `iter_changed` for which steps stay None.
    """
    for step, changed in iter_changed(root, module, options):
        step.changed = changed

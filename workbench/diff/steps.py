"""Diffs between steps of a module's timeline, and the per-step `changed` flags.

Steps are compared like with like (`workbench.diff.scopes`): an MLIR dump of one function
against the same function in a module dump, and a step against the IR as it stood before it:
the Before dump of the same pass run when the log has one, else the last dump that shows the
step's operation, with the dumps printed since of operations inside it spliced in.

Normalized texts and changed flags are kept in the store of derived facts
(`workbench.facts`: bounded, keyed by file, range, size and mtime), so walking a timeline or
diffing neighbouring steps normalizes every step once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.diff.ir_diff import IRDiff, diff_normalized, same_ir
from workbench.diff.normalize import NormalizedText, NormalizeOptions, TextKind, normalize
from workbench.diff.scopes import relative_scope, restrict, splice
from workbench.facts import FACTS, SMALL, TEXTS, FactKind
from workbench.model import Module, Source, Step
from workbench.sources import ReadError, read_text

# Normalized texts take about 2.5 times their file's size (a 548 KB step: 1.3 MB).
NORMALIZED: FactKind[NormalizedText] = FactKind("normalized", TEXTS, per_byte=2.5)
# Whether a step changed the IR, keyed by the step's file, with the sources of the dumps it
# was compared with and their signatures then (a flag is only as fresh as all of them).
CHANGED: FactKind[tuple[bool, tuple[Source, ...], tuple[tuple[object, ...], ...]]] = FactKind(
    "changed", SMALL, per_byte=0, fixed=256)
_AFTER_KINDS = ("pass", "pass-failed")


class ScopeMismatch(ReadError):
    """Two steps show different operations, neither holding the other: their texts cannot
    be compared (a ReadError, so whoever handles unreadable steps handles this too)."""


def find_step(module: Module, spec: str) -> Step:
    """A step by timeline index (`3`), XLA step number (`0028`, four digits, XLA modules
    only), pass name (`fusion`, `CSEPass`) or MLIR pass argument (`cse`).

    When a name matches the Before and After dumps of one pass run, the After dump is meant.
    Raises KeyError with the choices when the spec is unknown or ambiguous.
    """
    steps = module.steps
    xla = any(s.xla_step is not None for s in steps)
    if spec.isdigit():
        if xla and len(spec) == 4:
            found = [s for s in steps if s.xla_step == int(spec)]
            if len(found) == 1:
                return found[0]
            raise KeyError(f"no XLA step {spec} in {module.key} (a timeline index has fewer "
                           "than four digits)")
        index = int(spec)
        if 0 <= index < len(steps):
            return steps[index]
        raise KeyError(f"no step {spec!r} in {module.key} (timeline indices 0-{len(steps) - 1}"
                       + (", XLA steps are four digits like 0028" if xla else "") + ")")
    found = [s for s in steps if spec in (s.pass_name, s.argument)]
    if not found:
        found = [s for s in steps if spec in (s.label, f"{s.pipeline}.{s.pass_name}")]
    if len(found) > 1:
        after = [s for s in found if s.kind != "before-pass"]
        if len(after) == 1:
            found = after
    if len(found) == 1:
        return found[0]
    if found:
        listed = ", ".join(f"{s.index} ({describe(s)})" for s in found)
        raise KeyError(f"pass name {spec!r} is ambiguous in {module.key}: {listed}; "
                       f"give a timeline index" + (" or an XLA step number" if xla else ""))
    known = ", ".join(sorted({s.pass_name for s in steps})[:30])
    raise KeyError(f"no step {spec!r} in {module.key}; passes: {known}")


def describe(step: Step) -> str:
    """A step in a few words: `0028 fusion, HLO_passes`, `CSEPass (Before), func.func @main`."""
    parts = [step.label + (" (Before)" if step.kind == "before-pass" else "")]
    if step.pipeline:
        parts.append(step.pipeline)
    if step.scope:
        parts.append(step.scope)
    return ", ".join(parts)


def step_source(step: Step) -> Source:
    """The step's text, or the text printed from its proto when it has no text dump."""
    from workbench.formats.hlo_print import printed_source

    source = printed_source(step)
    if source is None:
        raise ReadError(step.file or step.pass_name, "this step has no text dump")
    return source


def load_normalized(root: Path, source: Source, kind: TextKind | None = None,
                    options: NormalizeOptions | None = None) -> NormalizedText:
    """The normalized text of `source` (cached; raises ReadError)."""
    options = options or NormalizeOptions()
    return FACTS.make(NORMALIZED, root, [source],
                      lambda: normalize(read_text(root, source), kind, options),
                      params=(kind, options))


def _load(root: Path, step: Step, options: NormalizeOptions | None) -> NormalizedText:
    return load_normalized(root, step_source(step), step.ir, options)


def like_with_like(a: Step, text_a: NormalizedText, b: Step, text_b: NormalizedText
                   ) -> tuple[NormalizedText, NormalizedText]:
    """The two texts cut to the same operation when the steps show different scopes (the
    wider one is cut to the narrower); raises ScopeMismatch when neither holds the other."""
    if a.scope == b.scope or a.scope is None or b.scope is None:
        return text_a, text_b
    path = relative_scope(a.scope, b.scope)
    if path is not None:
        cut = restrict(text_a, path)
        if cut is not None:
            return cut, text_b.trimmed()
    path = relative_scope(b.scope, a.scope)
    if path is not None:
        cut = restrict(text_b, path)
        if cut is not None:
            return text_a.trimmed(), cut
    raise ScopeMismatch(b.file or b.pass_name,
                        f"step {a.index} shows {a.scope} and step {b.index} shows {b.scope}: "
                        "neither holds the other, there is nothing alike to compare")


def diff_steps(root: Path, a: Step, b: Step, options: NormalizeOptions | None = None) -> IRDiff:
    """Diff the IR of two steps, like with like (raises ReadError when a step's text cannot
    be read, ScopeMismatch when they show unrelated operations)."""
    kind: TextKind | None = a.ir if a.ir == b.ir else None
    text_a = load_normalized(root, step_source(a), kind, options)
    text_b = load_normalized(root, step_source(b), kind, options)
    return diff_normalized(*like_with_like(a, text_a, b, text_b))


@dataclass
class Previous:
    """The IR just before a step, in the step's scope: `text`, made from the dumps of the
    steps at `positions` (the first is the base, the others were spliced into it); `cut` when
    it was cut out of a wider dump (compare it with the step's text `trimmed`)."""

    text: NormalizedText
    positions: list[int]
    cut: bool = False

    def against(self, after: NormalizedText) -> tuple[NormalizedText, NormalizedText]:
        """This text and `after`, ready to compare."""
        return (self.text.trimmed(), after.trimmed()) if self.cut else (self.text, after)


def previous_state(root: Path, module: Module, position: int,
                   options: NormalizeOptions | None = None) -> Previous | None:
    """The IR before the step at `position` of the timeline (see the module doc); None when
    no earlier dump shows it (the first step, a change of IR kind) or one in between cannot
    be read. Raises ReadError when the step's own base dump cannot be read."""
    tracker = _Tracker(root, module, options)
    for earlier in range(position):
        tracker.saw(earlier, readable=True)
    return tracker.previous(position)


def diff_with_previous(root: Path, module: Module, position: int,
                       options: NormalizeOptions | None = None) -> tuple[IRDiff, Previous] | None:
    """What the step at `position` did: its IR against `previous_state` (None when there is
    no previous state)."""
    previous = previous_state(root, module, position, options)
    if previous is None:
        return None
    after = _load(root, module.steps[position], options)
    return diff_normalized(*previous.against(after)), previous


class _Tracker:
    """Which dump last showed each scope, walking a timeline forward."""

    def __init__(self, root: Path, module: Module, options: NormalizeOptions | None) -> None:
        self.root = root
        self.steps = module.steps
        self.options = options
        self.latest: dict[tuple[str, str | None], int] = {}  # (ir, scope) -> position
        self.unreadable: set[int] = set()

    def saw(self, position: int, readable: bool) -> None:
        step = self.steps[position]
        self.latest[step.ir, step.scope] = position
        if not readable:
            self.unreadable.add(position)

    def base(self, position: int) -> tuple[int, list[int]] | None:
        """(position of the last dump showing this step's operation, positions of the dumps
        of operations inside it printed since, to splice in order)."""
        step = self.steps[position]
        if step.kind in _AFTER_KINDS and step.pair is not None and step.pair < position:
            return step.pair, []
        covering = [at for (ir, scope), at in self.latest.items()
                    if ir == step.ir and relative_scope(scope, step.scope) is not None]
        if not covering:
            return None
        base = max(covering)
        inside = {scope: at for (ir, scope), at in self.latest.items()
                  if ir == step.ir and at > base and scope != step.scope
                  and relative_scope(step.scope, scope) is not None}
        # An update of an operation is overridden by a later update of one holding it.
        updates = [at for scope, at in inside.items()
                   if not any(later > at and relative_scope(other, scope)
                              for other, later in inside.items() if other != scope)]
        return base, sorted(updates)

    def previous(self, position: int) -> Previous | None:
        found = self.base(position)
        if found is None:
            return None
        base, updates = found
        if base in self.unreadable or self.unreadable.intersection(updates):
            return None
        step = self.steps[position]
        base_step = self.steps[base]
        # Splices go into the whole base dump (its alias definitions stay with it); the
        # result is then cut to the step's operation.
        whole: NormalizedText | None = _load(self.root, base_step, self.options)
        for at in updates:
            update = self.steps[at]
            inner = relative_scope(base_step.scope, update.scope)
            assert inner is not None and whole is not None
            whole = splice(whole, inner, _load(self.root, update, self.options))
            if whole is None:
                return None
        path = relative_scope(base_step.scope, step.scope)
        assert path is not None and whole is not None
        text = restrict(whole, path)
        if text is None:
            return None
        return Previous(text, [base, *updates], cut=bool(path or updates))


def iter_changed(root: Path, module: Module, options: NormalizeOptions | None = None
                 ) -> Iterator[tuple[Step, bool | None]]:
    """Each step of `module` with whether its IR differs from the IR before it (see
    `previous_state`), as it goes (a UI streams the flags into its timeline; `mark_changed`
    stores them).

    None for the first step, steps after a change of IR kind (module.mlir -> HLO), steps
    whose text (or whose predecessor's) cannot be read, and MLIR steps whose predecessor
    cannot be put together (an operation not found where its scope says). Byte-identical
    texts are decided without normalizing.
    """
    tracker = _Tracker(root, module, options)
    for position, step in enumerate(module.steps):
        try:
            text = read_text(root, step_source(step))
        except ReadError:
            tracker.saw(position, readable=False)
            yield step, None
            continue
        changed: bool | None = None
        found = tracker.base(position)
        if found is not None:
            base, updates = found
            base_step = module.steps[base]
            try:
                compared = [step_source(module.steps[at]) for at in (base, *updates)]
                if not updates and base_step.scope == step.scope and base not in \
                        tracker.unreadable and read_text(root, step_source(base_step)) == text:
                    changed = False
                else:
                    previous = tracker.previous(position)
                    if previous is not None:
                        changed = not same_ir(*previous.against(_load(root, step, options)))
                if changed is not None:
                    _remember_changed(root, step, compared, changed, options)
            except ReadError:
                changed = None
        tracker.saw(position, readable=True)
        yield step, changed


def _remember_changed(root: Path, step: Step, compared: list[Source], changed: bool,
                      options: NormalizeOptions | None) -> None:
    source = step_source(step)
    FACTS.put(CHANGED, FACTS.signature(root, [source]),
              (changed, tuple(compared), FACTS.signature(root, compared)),
              params=(options or NormalizeOptions(),))


def known_changed(root: Path, step: Step, options: NormalizeOptions | None = None
                  ) -> bool | None:
    """Whether `step` changed the IR, if `iter_changed` found out for its file and the files
    it was compared with as they are now; None otherwise. Reads no file."""
    if step.text is None:
        return None
    found = FACTS.known(CHANGED, root, [step.text], params=(options or NormalizeOptions(),))
    if found is None:
        return None
    changed, compared, signatures = found
    try:
        return changed if FACTS.signature(root, compared) == signatures else None
    except ReadError:
        return None


def mark_changed(root: Path, module: Module, options: NormalizeOptions | None = None) -> None:
    """Fill `Step.changed` for every step: did its IR differ from the IR before it?

    See `iter_changed` for which steps stay None.
    """
    for step, changed in iter_changed(root, module, options):
        step.changed = changed

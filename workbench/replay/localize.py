"""From the culprit pass to the culprit instruction: which value did the pass get wrong?

Two steps of an HLO module (the step before a pass and the step after it) are evaluated on the
same inputs while an observer (`hlo.interpreter.Observer`) sees every intermediate value:
the entry, fusion and called bodies, loop bodies once per iteration. Instructions of the later
step are matched to the earlier step's (`match.py`), each matched value is judged against its
counterpart by the rule verdicts use (`compare` within the tolerance, else within the rounding
error bound of the earlier step's f64 shadow, `error_bound.truth_of`), and the culprit is the
first value of the later step, in evaluation order, that departs while every operand agrees.

Cost and memory: the earlier step once (keeping the values some later instruction is matched
to), the later step once (streamed: only values beyond the tolerance are kept), then the f64
shadow of the earlier step, and the perturbed shadow only when the first bound does not settle
it; the shadow runs stop as soon as they have seen every value they were asked for. Values
kept are counted, and beyond `memory_limit` bytes localization stops with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue, Shape
from workbench.model import Step
from workbench.replay.compare import Comparison, Truth, compare
from workbench.replay.localize_match import (
    CALLS,
    Frame,
    Key,
    Matching,
    Site,
    match_modules,
)

if TYPE_CHECKING:
    from workbench.replay.bisect import Verdict
    from workbench.replay.steps import Replay

MEMORY_LIMIT = 200 * 1024 * 1024  # bytes of intermediate values kept at most

DynKey = tuple[Key, tuple[int, ...]]  # a site and the loop iterations it was made in


class LocalizeError(Exception):
    """Localization cannot be done (not HLO, a step that cannot be evaluated, too large)."""


class _Enough(Exception):
    """Raised by a recorder that has every value it wants: ends the evaluation early."""


@dataclass
class _Frame:
    path: Frame
    loops: tuple[int, ...]
    recorded: bool
    current: Instruction | None = None
    counts: dict[tuple[str, str], int] = field(default_factory=dict)


class Recorder:
    """An interpreter observer that hands every value of the recorded frames (the entry and
    what fusion, call, while and conditional run; not reducers or comparators) to `sink`
    with its site key and loop iterations."""

    def __init__(self, sink: Callable[[DynKey, Instruction, Any], None]) -> None:
        self.sink = sink
        self.stack: list[_Frame] = []

    def enter(self, computation: Computation) -> None:
        if not self.stack:
            self.stack.append(_Frame((), (), True))
            return
        parent = self.stack[-1]
        caller = parent.current
        element = (caller.name if caller else "?", computation.name)
        count = parent.counts.get(element, 0)
        parent.counts[element] = count + 1
        recorded = parent.recorded and caller is not None and caller.opcode in CALLS
        loops = parent.loops + ((count,) if caller is not None and caller.opcode == "while"
                                else ())
        self.stack.append(_Frame((*parent.path, element), loops, recorded))

    def before(self, instruction: Instruction) -> None:
        self.stack[-1].current = instruction

    def value(self, instruction: Instruction, value: Any) -> None:
        frame = self.stack[-1]
        if frame.recorded:
            self.sink(((frame.path, instruction.name), frame.loops), instruction, value)

    def leave(self) -> None:
        self.stack.pop()


def _plain(value: Any, instruction: Instruction) -> LiteralValue:
    """A value as the comparison wants it: logical sub-byte values, numpy arrays."""
    from workbench.replay.hlo import sub_byte

    value = sub_byte.from_storage(value, instruction.shape)
    if isinstance(value, tuple):
        return tuple(np.asarray(v) if not isinstance(v, tuple) else v for v in value)
    return np.asarray(value)


def _nbytes(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return int(getattr(value, "nbytes", 0))


@dataclass
class ElementDiff:
    """One differing element, side by side: before, after, the truth and its bound."""

    index: tuple[int, ...]
    before: Any
    after: Any
    truth: Any = None
    bound: float | None = None


@dataclass
class InstructionRef:
    """An instruction in the user's words: where it is, what it computes, which source line."""

    name: str
    computation: str
    opcode: str
    op_name: str
    source: str  # "file:line", or "" when the metadata does not say
    context: str  # the calling context, e.g. "fusion add_rsqrt_fusion" or "while.3 iteration 2"
    text: str = ""  # the instruction's line in the step's text dump
    neighbours: list[str] = field(default_factory=list)  # the lines around it
    line: int | None = None  # 0-based line of `text` in the step's text dump


@dataclass
class Localization:
    """What comparing two steps value by value found.

    `instruction` (the later step's) and `counterpart` (the earlier step's) are set when one
    instruction explains the departure; otherwise `explanation` says why none does.
    """

    before: Step
    after: Step
    instruction: InstructionRef | None = None
    counterpart: InstructionRef | None = None
    comparison: Comparison | None = None
    elements: list[ElementDiff] = field(default_factory=list)
    explanation: str = ""
    matched: int = 0  # sites of the later step with a counterpart
    unmatched: list[str] = field(default_factory=list)  # later-step instructions with none
    beyond_tolerance: int = 0  # values the bound judged (some beyond the fixed tolerance)
    departing: int = 0  # values found to depart, up to the culprit
    evaluations: int = 0  # evaluations of a whole step (shadow runs count, even when cut short)
    seconds: float = 0.0
    kept_bytes: int = 0  # the most bytes of values held at once
    # What the reducer needs: both sites, the earlier step's values of the later
    # instruction's operands and of the earlier instruction's operands, and its own value.
    site: Site | None = None
    counterpart_site: Site | None = None
    operand_keys: list[DynKey] = field(default_factory=list)
    counterpart_operand_keys: list[DynKey] = field(default_factory=list)
    values: dict[DynKey, LiteralValue] = field(default_factory=dict)
    shapes: dict[DynKey, Shape] = field(default_factory=dict)

    @property
    def expected(self) -> LiteralValue | None:
        """The earlier step's value of the instruction (the reference of a reduction)."""
        if self.counterpart_site is None or self.culprit_loops is None:
            return None
        return self.values.get((self.counterpart_site.key, self.culprit_loops))

    culprit_loops: tuple[int, ...] | None = None

    @property
    def found(self) -> bool:
        return self.instruction is not None

    @property
    def summary(self) -> str:
        from workbench.replay.localize_text import localization_summary

        return localization_summary(self)

    def to_json(self) -> dict[str, Any]:
        from workbench.output.json_shapes import localization_json

        return localization_json(self)


@dataclass
class _Judged:
    """A later-step value against its counterpart: bit for bit the same (`after` None), or
    kept to be compared when the search reaches it (`comparison` then set)."""

    after: LiteralValue | None
    comparison: Comparison | None = None
    truth: Truth | None = None  # the truth it was last judged against


def _bits(array: np.ndarray) -> np.ndarray:
    size = array.dtype.itemsize
    if size in (1, 2, 4, 8):
        return array.view(f"u{size}")
    return np.ascontiguousarray(array).view("u8")


def _identical(a: LiteralValue, b: LiteralValue) -> bool:
    """Bit for bit the same value: one cheap pass, the common case before the culprit."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_identical(x, y) for x, y in zip(a, b, strict=True)))
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(_bits(a), _bits(b))


class _Bound:
    """Judges values beyond the tolerance by the rounding error bound, as verdicts do: the
    earlier step's f64 shadow first, the perturbed inputs only where that is not enough.

    A shadow evaluation collects the values asked for and stops as soon as it has them all:
    the first asks for the value being judged and every value where a departure can start
    (the frontier), the perturbed one for the value that failed the first bound. Another
    evaluation is made only for a value no earlier one collected."""

    def __init__(self, localizer: Localizer, judged: dict[DynKey, _Judged],
                 before_values: dict[DynKey, LiteralValue]) -> None:
        self.localizer = localizer
        self.judged = judged
        self.before_values = before_values
        self.shadows: dict[DynKey, Any] = {}
        self.perturbed: dict[DynKey, Any] = {}
        self.shadow: HloModule | None = None
        self.problem: str | None = None

    def _before_key(self, key: DynKey) -> DynKey:
        return self.localizer.matching.counterpart[key[0]], key[1]

    def _collect(self, keys: set[DynKey], perturbed: bool, into: dict[DynKey, Any]) -> None:
        """Evaluate the earlier step's shadow until it has made every value in `keys`."""
        from workbench.replay.error_bound import perturb, widen
        from workbench.replay.errors import Unsupported
        from workbench.replay.hlo.shadow import shadow_module

        localizer = self.localizer
        missing = set(keys)

        def sink(key: DynKey, instruction: Instruction, value: Any) -> None:
            if key in missing:
                into[key] = value if isinstance(value, tuple) else np.asarray(value)
                localizer._keep(into[key])
                missing.discard(key)
                if not missing:
                    raise _Enough()

        if self.shadow is None:
            try:
                self.shadow = shadow_module(localizer.before)
            except Unsupported as error:
                raise LocalizeError(f"unsupported: {error.what}") from None
        arguments = (perturb(localizer.arguments) if perturbed
                     else [widen(a) for a in localizer.arguments])
        localizer._evaluate(self.shadow, arguments, sink)

    def truth(self, key: DynKey, conditioning: bool, frontier: list[DynKey]) -> Truth:
        """The truth of the value at `key` for one stage of the bound. Raises
        `LocalizeError` when there is no f64 evaluation (kept: asked once only)."""
        from workbench.replay.error_bound import truth_of

        if self.problem is not None:
            raise LocalizeError(self.problem)
        before_key = self._before_key(key)
        try:
            if before_key not in self.shadows:
                wanted = {before_key, *(self._before_key(k) for k in frontier)}
                self._collect(wanted - set(self.shadows), False, self.shadows)
            if conditioning and before_key not in self.perturbed:
                self._collect({before_key}, True, self.perturbed)
        except LocalizeError as error:
            self.problem = f"no f64 evaluation: {error}"
            raise LocalizeError(self.problem) from None
        shadow = self.shadows.get(before_key)
        moved = self.perturbed.get(before_key) if conditioning else shadow
        if shadow is None or moved is None:
            raise LocalizeError("the f64 evaluation made no such value")
        try:
            return truth_of(self.before_values[before_key], shadow, moved)
        except ValueError as error:
            raise LocalizeError(str(error)) from None


@dataclass
class _ValueTruth:
    """The truth of one value in the stages verdicts use (a `compare.TruthSource`): the
    f64 shadow first, the perturbed inputs too only when the first bound is not enough."""

    bound: _Bound
    key: DynKey
    frontier: list[DynKey]
    problem: str | None = None
    last: Truth | None = None  # the truth of the last stage asked for

    def stages(self) -> tuple[bool, ...]:
        return (False, True)

    def truth(self, conditioning: bool) -> Truth | None:
        try:
            self.last = self.bound.truth(self.key, conditioning, self.frontier)
        except LocalizeError as error:
            self.problem = str(error)
            return None
        return self.last


class Localizer:
    """Localize the departure between `before` and `after` (two loaded HLO modules)."""

    def __init__(self, before: HloModule, after: HloModule,
                 arguments: Sequence[LiteralValue], memory_limit: int = MEMORY_LIMIT) -> None:
        self.before = before
        self.after = after
        self.arguments = list(arguments)
        self.memory_limit = memory_limit
        self.matching: Matching = match_modules(before, after)
        self.evaluations = 0
        self.kept = 0
        self.peak = 0

    def _keep(self, value: Any) -> None:
        self.kept += _nbytes(value)
        self.peak = max(self.peak, self.kept)
        if self.kept > self.memory_limit:
            raise LocalizeError(
                f"the values localization keeps exceed {self.memory_limit // 2**20} MB; "
                "localize a smaller module or a pair of steps closer to the output")

    def _evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
                  sink: Callable[[DynKey, Instruction, Any], None]) -> LiteralValue | None:
        from workbench.replay.errors import EvaluationError, Unsupported
        from workbench.replay.hlo import evaluate_module

        self.evaluations += 1
        try:
            return evaluate_module(module, arguments, Recorder(sink))
        except _Enough:
            return None
        except Unsupported as error:
            raise LocalizeError(f"unsupported: {error.what}") from None
        except EvaluationError as error:
            raise LocalizeError(f"cannot evaluate {module.name}: {error}") from None

    def run(self, before_step: Step, after_step: Step) -> Localization:
        start = time.perf_counter()
        matching = self.matching
        wanted = set(matching.counterpart.values())
        before_values: dict[DynKey, LiteralValue] = {}

        def keep_before(key: DynKey, instruction: Instruction, value: Any) -> None:
            if key[0] in wanted:
                plain = _plain(value, instruction)
                self._keep(plain)
                before_values[key] = plain

        self._evaluate(self.before, self.arguments, keep_before)

        order: list[DynKey] = []  # later-step sites in evaluation order
        judged: dict[DynKey, _Judged] = {}
        missing: list[DynKey] = []  # matched, but the earlier step made no such value

        def judge_after(key: DynKey, instruction: Instruction, value: Any) -> None:
            site_key, loops = key
            if matching.alias_after.get(site_key, site_key) != site_key:
                return  # a fusion's parameter or result: the same value as another site
            counterpart = matching.counterpart.get(site_key)
            if counterpart is None:
                return
            order.append(key)
            reference = before_values.get((counterpart, loops))
            if reference is None:
                missing.append(key)
                return
            plain = _plain(value, instruction)
            if _identical(reference, plain):
                judged[key] = _Judged(None)  # the common case, at one pass's cost
                return
            self._keep(plain)
            judged[key] = _Judged(plain)

        self._evaluate(self.after, self.arguments, judge_after)
        self._bound = _Bound(self, judged, before_values)
        result = self._culprit(before_step, after_step, order, judged, missing, before_values)
        result.evaluations = self.evaluations
        result.kept_bytes = self.peak
        result.seconds = time.perf_counter() - start
        return result

    def _frontier(self, order: list[DynKey], judged: dict[DynKey, _Judged]) -> list[DynKey]:
        """Values that differ while every operand is bit for bit its counterpart's: where a
        departure can start (their shadows are made together, in one evaluation)."""
        matching = self.matching
        found = []
        for key in order:
            j = judged.get(key)
            if j is None or j.after is None:
                continue
            operands = matching.sites_after[key[0]].operands
            if all((o := judged.get((matching.alias_after.get(p, p), key[1]))) is not None
                   and o.after is None for p in operands):
                found.append(key)
        return found

    def _culprit(self, before_step: Step, after_step: Step, order: list[DynKey],
                 judged: dict[DynKey, _Judged], missing: list[DynKey],
                 before_values: dict[DynKey, LiteralValue]) -> Localization:
        """The first value in evaluation order that departs while its operands agree.

        The earliest departing value has agreeing operands unless one has no counterpart, so
        values are judged by the bound lazily, in order, and only where every operand agrees
        (a value with a departing operand departs downstream and is not judged)."""
        matching = self.matching
        result = Localization(before_step, after_step, matched=len(matching.counterpart),
                              unmatched=[s.label for s in matching.unmatched_after])
        agrees: dict[DynKey, bool] = {}
        reasons: list[str] = []
        departing = 0
        frontier: list[DynKey] | None = None
        for key in order:
            j = judged.get(key)
            if j is None:
                continue  # the earlier step made no such value: it agrees with nothing
            if j.after is None:
                agrees[key] = True
                continue
            site = matching.sites_after[key[0]]
            operands = [(matching.alias_after.get(o, o), key[1]) for o in site.operands]
            bad = [o for o in operands if not agrees.get(o, False)]
            if bad:
                agrees[key] = False  # downstream of a departure: not compared at all
                departing += 1
                if len(reasons) < 3:
                    names = ", ".join(
                        matching.sites_after[o[0]].instruction.name
                        + (" (departs)" if o in agrees else " (no counterpart)") for o in bad)
                    reasons.append(f"{site.instruction.name} departs with its operands {names}")
                continue
            reference = before_values[(matching.counterpart[key[0]], key[1])]
            if frontier is None:
                frontier = self._frontier(order, judged)
            source = _ValueTruth(self._bound, key, frontier)
            j.comparison = compare(reference, j.after, truth=source)
            j.truth = source.last
            if j.comparison.bound is not None:
                result.beyond_tolerance += 1
            if j.comparison.ok:
                agrees[key] = True  # within the tolerance, or within the rounding error bound
                continue
            result.departing = departing + 1
            return self._found(result, key, j, operands, before_values)
        result.departing = departing
        if not departing:
            root = matching.root_after
            if matching.counterpart.get(root) is None:
                result.explanation = (
                    "no matched instruction departs; the departure only shows at the output, "
                    f"whose instruction {matching.sites_after[root].instruction.name} has no "
                    "counterpart before the pass")
            else:
                result.explanation = ("no instruction of the later step departs from its "
                                      "counterpart beyond the rounding error bound")
        else:
            result.explanation = ("no single instruction explains it: every departing value "
                                  "has an operand that departs too or has no counterpart ("
                                  + "; ".join(reasons) + ")")
        if result.unmatched:
            shown = ", ".join(result.unmatched[:5])
            more = f" and {len(result.unmatched) - 5} more" if len(result.unmatched) > 5 else ""
            result.explanation += f"; values with no counterpart: {shown}{more}"
        if missing:
            result.explanation += (f"; {len(missing)} matched value(s) the earlier step never "
                                   "made (a loop ran a different number of times?)")
        return result

    def _found(self, result: Localization, key: DynKey, judged: _Judged,
               operands: list[DynKey], before_values: dict[DynKey, LiteralValue]) -> Localization:
        matching = self.matching
        site = matching.sites_after[key[0]]
        before_key = (matching.counterpart[key[0]], key[1])
        other = matching.sites_before[before_key[0]]
        result.instruction = describe(self.after, site, key[1])
        result.counterpart = describe(self.before, other, key[1])
        result.comparison = judged.comparison
        reference = before_values[before_key]
        result.elements = differing_elements(reference, judged.after, judged.comparison,
                                             judged.truth)
        result.site, result.counterpart_site, result.culprit_loops = site, other, key[1]
        result.operand_keys = [(matching.counterpart[o[0]], o[1]) for o in operands]
        result.counterpart_operand_keys = [
            (matching.alias_before.get(o, o), key[1]) for o in other.operands]
        kept = (*result.operand_keys, *result.counterpart_operand_keys, before_key)
        result.values = {k: before_values[k] for k in kept if k in before_values}
        result.shapes = {k: matching.sites_before[k[0]].instruction.shape for k in kept}
        return result


def describe(module: HloModule, site: Site, loops: tuple[int, ...]) -> InstructionRef:
    instruction = site.instruction
    metadata = instruction.metadata
    location = module.source_location(instruction)
    return InstructionRef(
        name=instruction.name, computation=site.computation.name, opcode=instruction.opcode,
        op_name=metadata.op_name if metadata is not None else "",
        source=f"{location[0]}:{location[1]}" if location else "",
        context=site.context_text(loops))


def _element(value: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        value = value[index]
    return np.asarray(value)


def differing_elements(before: LiteralValue, after: LiteralValue | None,
                       comparison: Comparison, truth: Truth | None,
                       limit: int = 5) -> list[ElementDiff]:
    """The first `limit` elements that differ by the comparison's own rule (each candidate
    element re-judged by `compare`, so the list never disagrees with the verdict)."""
    if after is None or comparison.problem is not None:
        return []
    path = comparison.first_element
    a, b = _element(before, path), _element(after, path)
    t = bound = None
    if truth is not None:
        t = _element(truth.value, path)
        bound = _element(truth.bound, path) if truth.bound is not None else None
    wide_a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    wide_b = b.astype(wide_a.dtype)
    with np.errstate(invalid="ignore"):
        differ = np.flatnonzero(~((wide_a == wide_b) | (np.isnan(wide_a) & np.isnan(wide_b))))
    found: list[ElementDiff] = []
    for flat in differ[:2000]:
        index = tuple(int(i) for i in np.unravel_index(int(flat), a.shape))
        part = None
        if t is not None and bound is not None:
            part = Truth(t[index], bound[index])
        if compare(a[index], b[index], truth=part).ok:
            continue
        found.append(ElementDiff(index, a[index].item(), b[index].item(),
                                 None if t is None else t[index].item(),
                                 None if bound is None else float(bound[index])))
        if len(found) == limit:
            break
    return found


def localize_modules(before: HloModule, after: HloModule, arguments: Sequence[LiteralValue],
                     before_step: Step, after_step: Step,
                     memory_limit: int = MEMORY_LIMIT) -> Localization:
    """Localize between two loaded modules (no text lines; see `localize_steps`)."""
    return Localizer(before, after, arguments, memory_limit).run(before_step, after_step)


def localize_steps(root: Path, before_step: Step, after_step: Step,
                   arguments: Sequence[LiteralValue],
                   memory_limit: int = MEMORY_LIMIT) -> Localization:
    """Localize the departure between two HLO steps of a dump, with the instructions' text
    lines and neighbours from the steps' text dumps. Raises `LocalizeError`."""
    from workbench.loader import ReadError, load_step_hlo
    from workbench.replay.localize_text import attach_text

    if before_step.ir != "hlo" or after_step.ir != "hlo":
        raise LocalizeError("localization compares HLO steps (MLIR is not supported yet)")
    try:
        before, after = load_step_hlo(root, before_step), load_step_hlo(root, after_step)
    except ReadError as error:
        raise LocalizeError(str(error)) from None
    result = localize_modules(before, after, arguments, before_step, after_step, memory_limit)
    attach_text(root, result)
    return result


def localize_verdict(replay: Replay, verdict: Verdict) -> Localization:
    """Localize a bisection's culprit: the step before it against the culprit step, on the
    replay's inputs. Raises `LocalizeError` (no culprit, not HLO, cannot evaluate)."""
    if verdict.culprit is None:
        raise LocalizeError("no culprit step to localize: " + verdict.detail)
    if replay.backend.name != "hlo":
        raise LocalizeError(f"localization compares HLO steps; this module is replayed by the "
                            f"{replay.backend.name} backend")
    position = verdict.culprit.position
    return localize_steps(replay.backend.root, replay.steps[position - 1],
                          replay.steps[position], replay.inputs.arguments)


def culprit_instruction(replay: Replay, verdict: Verdict) -> dict[str, Any]:
    """What `--localize` adds to a culprit (see `json_shapes.localized_culprit_json`)."""
    from workbench.output.json_shapes import localized_culprit_json

    try:
        return localized_culprit_json(localize_verdict(replay, verdict))
    except LocalizeError as error:
        return localized_culprit_json(str(error))

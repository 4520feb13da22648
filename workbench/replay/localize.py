"""From the culprit pass to the culprit instruction: which value did the pass get wrong?

Two steps of an HLO module (the step before a pass and the step after it) are evaluated on the
same inputs while an observer (`hlo.interpreter.Observer`) sees every intermediate value:
the entry, fusion and called bodies, loop bodies once per iteration. Instructions of the later
step are matched to the earlier step's (`localize_match.py`), each matched value is judged
against its counterpart by the rule verdicts use (`compare` with a `TruthSource`: within the
tolerance, else within the rounding error bound of the f64 truth, then of the truth on
perturbed inputs; `error_bound.truth_of`), and the culprit is the first value of the later
step, in evaluation order, that departs while every operand agrees (`_Search`).

The truth of a value is that of its *region* (`region_module`): the earlier step's
instructions making it, back to the values both steps made bit for bit alike, evaluated in
f64 on those values (and on them perturbed). Rounding before them is common to both steps and
explains no difference between them; a step treated as one region is what a verdict judges.
Where no region is found (it would pass a loop's result, or grow past `REGION_LIMIT`), the
truth is the earlier step's own f64 shadow (`_Shadows`, `cone_module`).

Cost and memory: the earlier step as far as the later step gets (`_EarlierStep`: the two are
evaluated in turns, keeping the earlier step's values some later instruction is matched to);
of the later step, only what it does not make bit for bit as the earlier step did
(`Localizer.settled`: an instruction computing the same as its counterpart on such values,
whatever the inputs; `unsettled_module`), judged as it is made up to the culprit, so it is not
kept (where the values turn out alike anyway, the earlier step's are taken, `_Search.known`);
and the regions of the values judged beyond the tolerance. Values kept are counted with
what the evaluations running at once hold (`Interpreter.holds_at_once`: the earlier and the
later step, and a shadow, each sized from its declared shapes), and beyond the memory limit
(`--memory-limit`, `replay.memory`) localization stops with a clear error.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.gc_pause import gc_paused
from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue, Shape
from workbench.model import Step
from workbench.replay.compare import NOISE, Comparison, Stage, Truth, compare, same_bits
from workbench.replay.localize_match import (
    ALIASING,
    CALLS,
    DETAILS,
    Frame,
    Key,
    Matching,
    Site,
    literal_key,
    match_modules,
)

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.hlo.noise import Noise
    from workbench.replay.localize_mlir import MlirCulprit

DynKey = tuple[Key, tuple[int, ...]]  # a site and the loop iterations it was made in
Region = tuple[HloModule, list[DynKey]]  # a value's region and the values it starts from


class LocalizeError(Exception):
    """Localization cannot be done (not HLO, a step that cannot be evaluated, too large)."""


def stage_truth(strict: Callable[[], Any], shadow: Callable[[], Any], moved: Callable[[], Any],
                conditioning: bool) -> tuple[Truth | None, str | None]:
    """One stage of a value's truth for the verdicts' rule: the f64 value and its bound (with
    `conditioning`, from the evaluation on perturbed inputs too), or why there is none."""
    from workbench.replay.error_bound import truth_of

    try:
        truth = shadow()
        perturbed = moved() if conditioning else truth
    except LocalizeError as error:
        return None, f"no f64 evaluation: {error}"
    if truth is None or perturbed is None:
        return None, "the f64 evaluation made no such value"
    try:
        return truth_of(strict(), truth, perturbed), None
    except ValueError as error:
        return None, str(error)


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
    with its site key and loop iterations; `known` may give a recorded instruction's value
    before it is computed (see `_Search.known`)."""

    def __init__(self, sink: Callable[[DynKey, Instruction, Any], None],
                 known: Callable[[DynKey], Any] | None = None) -> None:
        self.sink = sink
        self.known = known
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

    def before(self, instruction: Instruction) -> Any:
        frame = self.stack[-1]
        frame.current = instruction
        if self.known is None or not frame.recorded or instruction.opcode in CALLS:
            return None
        return self.known(((frame.path, instruction.name), frame.loops))

    def value(self, instruction: Instruction, value: Any) -> None:
        frame = self.stack[-1]
        if frame.recorded:
            self.sink(((frame.path, instruction.name), frame.loops), instruction, value)

    def leave(self) -> None:
        self.stack.pop()


def _plain(value: Any, instruction: Instruction, sub_byte_types: Container[str]) -> LiteralValue:
    """A value as the comparison wants it: logical sub-byte values (of `sub_byte_types`, the
    evaluator's `SUB_BYTE_WIDTHS`, stored a byte each), numpy arrays."""
    if type(value) is np.ndarray and instruction.shape.element_type not in sub_byte_types:
        return value  # the common case, once per value
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
    outputs: Comparison | None = None  # the two results, judged when no culprit was found
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
    culprit_loops: tuple[int, ...] | None = None  # the loop iterations it departed in
    mlir: MlirCulprit | None = None  # the same for an MLIR culprit (`reduce_mlir`)
    partitions: tuple[int, ...] = ()  # the devices it departs on (per-device SPMD steps)

    @property
    def expected(self) -> LiteralValue | None:
        """The earlier step's value of the instruction (the reference of a reduction)."""
        if self.counterpart_site is None or self.culprit_loops is None:
            return None
        return self.values.get((self.counterpart_site.key, self.culprit_loops))

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


# What `same_computation` compares besides the shape (names and metadata do not change what an
# instruction computes; a constant is compared by its bytes).
_NAMING = frozenset(("name", "operands", "called_computations", "id", "metadata", "literal",
                     "shape"))
_attributes = attrgetter(*(f.name for f in fields(Instruction) if f.name not in _NAMING))
# The same but the details a structural match already found equal (`localize_match.DETAILS`,
# compared with the opcode, the shape's type and dimensions and a constant's bytes).
_rest = attrgetter(*(f.name for f in fields(Instruction)
                     if f.name not in _NAMING and f.name not in DETAILS))


def _identical(a: LiteralValue, b: LiteralValue) -> bool:
    """Bit for bit the same value: one cheap pass, the common case before the culprit."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_identical(x, y) for x, y in zip(a, b, strict=True)))
    return same_bits(a, b)


class _Shadows:
    """The earlier step's values in f64 (one `kind`: on the inputs, or on perturbed ones), the
    truth of values with no region (see the module's docstring).

    The first evaluation runs only the entry instructions the value asked for depends on (its
    cone; `cone_module`) and stops once it has made it, keeping every matched value it made
    on the way; a value it did not make costs a second evaluation of the whole step, which
    runs to the end. So a culprit costs the shadows of what it depends on, and no kind costs
    more than two evaluations."""

    def __init__(self, localizer: Localizer, perturbed: bool) -> None:
        self.localizer = localizer
        self.perturbed = perturbed
        self.values: dict[DynKey, Any] = {}
        self.runs = 0
        self.complete = False

    def get(self, key: DynKey, also: set[DynKey] | None = None) -> Any:
        """The value at `key` (an earlier-step key), or None when the shadow made none; an
        evaluation it needs runs until it has made `also` too. Raises `LocalizeError` when
        the shadow cannot be evaluated."""
        from workbench.replay.error_bound import perturb, widen

        if key in self.values or self.complete:
            return self.values.get(key)
        localizer = self.localizer
        wanted = localizer.wanted
        whole = self.runs >= 1
        missing = {key, *(also or ())} - set(self.values)
        asked = set(missing)

        def sink(made: DynKey, instruction: Instruction, value: Any) -> None:
            if made[0] in wanted and made not in self.values:
                self.values[made] = value if isinstance(value, tuple) else np.asarray(value)
                localizer._keep(self.values[made])
                missing.discard(made)
                if not missing and not whole:
                    raise _Enough()

        arguments = (perturb(localizer.arguments) if self.perturbed
                     else [widen(a) for a in localizer.arguments])
        module = localizer.shadow_module()
        if not whole:
            module = localizer.cone(module, frozenset(_entry_name(k) for k in asked))
        self.runs += 1
        ended = localizer._evaluate(module, arguments, sink) is not None
        if whole:
            self.complete = ended
        elif ended:  # the cone ran to its end: what it did not make, the step never makes
            self.values.update(dict.fromkeys(missing))
        return self.values.get(key)


def _entry_name(key: DynKey) -> str:
    """The entry computation's instruction that makes (or runs the body making) a value."""
    frame, name = key[0]
    return frame[0][0] if frame else name


def cone_module(module: HloModule, names: set[str]) -> HloModule:
    """`module` with its entry computation cut to what the entry instructions `names` depend
    on (in their order; every parameter kept, so it takes the same arguments), the last of
    them its root. Evaluating it makes those values as the whole module would."""
    entry = module.entry
    by_name = entry.by_name
    needed: set[str] = set()
    pending = [n for n in names if n in by_name]
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending.extend(by_name[name].operands)
    kept = [i for i in entry.instructions if i.name in needed or i.opcode == "parameter"]
    if not needed or len(kept) == len(entry.instructions):
        return module
    root = [i.name for i in kept if i.name in needed][-1]
    cut = Computation(entry.name, kept, root, entry.is_entry, entry.id)
    return replace(module, computations=[cut if c is entry else c
                                         for c in module.computations])


def unsettled_module(module: HloModule, settled: Container[Key]) -> HloModule:
    """`module` without the entry instructions `settled` names (their values known, see
    `Localizer.settled`) that no other instruction kept reads; those read (and the root)
    become placeholders: constants of their shape with no value, whose values the observer
    gives (`_Search.known`). Parameters stay, so it takes the same arguments."""
    entry = module.entry
    read = {o for i in entry.instructions if ((), i.name) not in settled for o in i.operands}
    read.add(entry.root_name)
    kept = []
    for instruction in entry.instructions:
        if instruction.opcode == "parameter" or ((), instruction.name) not in settled:
            kept.append(instruction)
        elif instruction.name in read:
            kept.append(Instruction(instruction.name, "constant", instruction.shape,
                                    literal_elided=True))
    cut = Computation(entry.name, kept, entry.root_name, entry.is_entry, entry.id)
    return replace(module, computations=[cut if c is entry else c
                                         for c in module.computations])


REGION_LIMIT = 64  # instructions a value's region may hold (beyond: the step's shadow)


def region_module(module: HloModule, sites: dict[Key, Site], alias: dict[Key, Key],
                  root: Key, cut: Callable[[Key], bool]) -> tuple[HloModule, list[Key]] | None:
    """The instructions of `module` making the value at site `root` back to the values `cut`
    names (site keys, `alias` resolving fusion parameters and results: the region crosses
    into and out of fusion and call bodies), with the computations they call, as one
    computation whose parameters are those values (their keys returned in order): evaluated
    on them, it makes `root`'s value. None when the region reaches a value that is not cut
    and not made there (a parameter, a loop's or branch's result) or holds more than
    `REGION_LIMIT` instructions."""
    inside: list[Key] = []  # operands before the instructions reading them
    starts: list[Key] = []
    seen: set[Key] = set()
    pending: list[tuple[Key, bool]] = [(root, False)]
    while pending:
        key, operands_done = pending.pop()
        if operands_done:
            inside.append(key)
            continue
        if key in seen:
            continue
        seen.add(key)
        if key != root and cut(key):
            starts.append(key)
            continue
        site = sites[key]
        opcode = site.instruction.opcode
        if opcode == "parameter" or opcode in CALLS or len(seen) - len(starts) > REGION_LIMIT:
            return None
        pending.append((key, True))
        pending.extend((alias.get(o, o), False) for o in reversed(site.operands))
    names: dict[Key, str] = {}
    for key in (*starts, *inside):  # names are unique in a module; made so where bodies repeat
        name = key[1]
        names[key] = name if name not in names.values() else f"{name}.{len(names)}"
    parameters = [Instruction(names[key], "parameter", sites[key].instruction.shape,
                              parameter_number=number) for number, key in enumerate(starts)]
    body = [replace(sites[key].instruction, name=names[key],
                    operands=[names[alias.get(o, o)] for o in sites[key].operands])
            for key in inside]
    called = dict.fromkeys(c for i in body for c in module.callees(i) if c in module.by_name)
    entry = Computation(f"{names[root]}.region", [*parameters, *body], names[root], True)
    return HloModule(module.name, [*(module.by_name[c] for c in called), entry],
                     entry.name), starts


@dataclass
class _ValueTruth:
    """The truth of one value in the stages verdicts use (a `compare.TruthSource`): its
    region's (or the step's) f64 value first, on perturbed inputs too only when the first
    bound is not enough."""

    localizer: Localizer
    key: DynKey  # the earlier step's value
    also: set[DynKey] = field(default_factory=set)  # made in the same evaluation if needed
    identical: set[DynKey] | None = None  # later-step values bit for bit the earlier's: a
    # value's region starts there (`Localizer.region_truth`); None: the whole step's shadow
    problem: str | None = None
    last: Truth | None = None  # the truth of the last stage asked for

    def stages(self) -> tuple[Stage, ...]:
        """The verdicts' stages; the noise stage where the value has a region (its rounding
        noise is then modelled from values both steps made alike, see `hlo/noise.py`)."""
        return (False, True) if self.identical is None else (False, True, NOISE)

    def truth(self, conditioning: Stage) -> Truth | None:
        localizer, key = self.localizer, self.key
        region = (localizer.region(key, self.identical) if self.identical is not None
                  else None)
        if conditioning == NOISE:
            return self._noisy(region)
        if region is not None:
            shadow = lambda: localizer.region_truth(key, region, perturbed=False)  # noqa: E731
            moved = lambda: localizer.region_truth(key, region, perturbed=True)  # noqa: E731
        else:
            shadow = lambda: localizer.shadows.get(key, self.also)  # noqa: E731
            moved = lambda: localizer.perturbed.get(key, self.also)  # noqa: E731
        truth, problem = stage_truth(lambda: localizer.before_value(key), shadow, moved,
                                     conditioning)
        if truth is None:
            self.problem = problem
            return None
        self.last = truth
        return truth

    def _noisy(self, region: Region | None) -> Truth | None:
        """The conditioning stage's truth widened by the region's rounding noise."""
        from workbench.replay.error_bound import with_noise

        if region is None:
            self.problem = "no region to model the rounding noise in"
            return None
        base = self.truth(True)
        if base is None:
            return None
        try:
            noise = self.localizer.region_noise(self.key, region)
        except LocalizeError as error:
            self.problem = f"no random-rounding evaluation: {error}"
            return None
        if noise is None:
            self.problem = "the random-rounding evaluation made no such value"
            return None
        try:
            self.last = with_noise(base, noise)
        except ValueError as error:
            self.problem = str(error)
            return None
        return self.last


@contextmanager
def _evaluation_errors(what: str) -> Iterator[None]:
    """An evaluation's errors as `LocalizeError`s."""
    from workbench.replay.errors import EvaluationError, Unsupported

    try:
        yield
    except Unsupported as error:
        raise LocalizeError(f"unsupported: {error.what}") from None
    except EvaluationError as error:
        raise LocalizeError(f"cannot evaluate {what}: {error}") from None


Found = tuple[DynKey, Comparison, LiteralValue, "Truth | None", list[DynKey]]
WEAK = "weak"  # an agreement state: departs, but only an opcode-changed match says so


@dataclass
class _Search:
    """The search for the culprit, value by value as the later step makes them: the first
    value that departs while every operand agrees. Values are judged in evaluation order; a
    value with an operand that does not agree departs downstream and is not compared at all,
    and the search (and the evaluation) stops at a culprit matched by structure.

    A departing value matched only by its operands (the pass changed its opcode) may be a
    legal rewrite (`x / sqrt(y)` -> `x * rsqrt(y)`): it is a *candidate*, and its consumers
    are still judged. One that agrees with its counterpart absorbs the difference and clears
    the candidate; one whose consumers all depart (or, with none, whose results depart) is the
    culprit."""

    localizer: Localizer
    agrees: dict[DynKey, bool | str] = field(default_factory=dict)
    identical: set[DynKey] = field(default_factory=set)  # bit for bit the earlier value
    reasons: list[str] = field(default_factory=list)
    departing: int = 0
    judged_by_bound: int = 0
    missing: int = 0  # matched values the earlier step never made
    culprit: Found | None = None
    candidates: dict[DynKey, Found] = field(default_factory=dict)  # weak, not yet absorbed
    waiting: dict[DynKey, int] = field(default_factory=dict)  # candidate -> consumers to see

    def known(self, key: DynKey) -> Any:
        """The earlier step's value of an instruction that computes the same thing
        (`Localizer.same_computation`) on operands that are bit for bit the earlier step's:
        the evaluator is deterministic, so that is its value, and it is not computed again."""
        localizer = self.localizer
        site_key, loops = key
        settled = localizer.settled().get(site_key)
        if settled is not None:
            return localizer.before_value(settled)  # a placeholder of `unsettled_module`
        counterpart = localizer.same_computation(site_key)
        if counterpart is None:
            return None
        identical = self.identical
        for operand in localizer.visit_info(site_key)[1]:
            if (operand, loops) not in identical:
                return None
        value = localizer.before_value((counterpart, loops))
        if value is not None:  # judged here: `visit` has nothing left to do
            identical.add(key)
            self.agrees[key] = True
        return value

    def visit(self, key: DynKey, instruction: Instruction, value: Any) -> None:
        if key in self.identical:
            return  # a value `known` gave
        localizer = self.localizer
        site_key, loops = key
        counterpart, site_operands, carried = localizer.visit_info(site_key)
        if counterpart is None:
            return  # no counterpart, or the same value as another site (a fusion's result)
        before_key = (counterpart, loops)
        reference = localizer.before_value(before_key)
        if reference is None:
            self.missing += 1
            return
        plain = _plain(value, instruction, localizer.sub_byte)
        if carried:
            # A loop's or branch's parameter: its value comes from the loop's operand or the
            # previous iteration, judged there; a departure here is carried, never a culprit.
            if _identical(reference, plain):
                self.identical.add(key)
                self.agrees[key] = True
                return
            plain = localizer.as_read(site_key, reference, plain)
            self.agrees[key] = compare(reference, plain,
                                       truth=_ValueTruth(localizer, before_key)).ok
            if not self.agrees[key]:
                self._downstream(instruction, [])
            return
        identical = self.identical
        if all((o, loops) in identical for o in site_operands) and _identical(reference, plain):
            identical.add(key)  # the common case before the culprit, made short
            self.agrees[key] = True
            return
        operands = [(o, loops) for o in site_operands]
        states = [self.agrees.get(o, False) for o in operands]
        if all(state is True for state in states) and _identical(reference, plain):
            identical.add(key)
            self.agrees[key] = True
            return
        plain = localizer.as_read(site_key, reference, plain)  # a tuple: what results read
        weak = list(dict.fromkeys(o for o, s in zip(operands, states, strict=True) if s == WEAK))
        if any(state is False for state in states):
            self.agrees[key] = _identical(reference, plain)
            if self.agrees[key]:
                self.identical.add(key)
            else:
                self._downstream(instruction, [o for o, state in zip(operands, states,
                                                                     strict=True)
                                               if state is False])
                self._consumer_departs(weak)
            return
        # An opcode-changed match may be a rewrite its consumers absorb: their shadows are
        # made in the same evaluation.
        matching = localizer.matching
        also = {(matching.counterpart[user], loops) for user in matching.users.get(site_key, ())
                if site_key in matching.weak and user in matching.counterpart}
        source = _ValueTruth(localizer, before_key, also, identical)
        comparison = compare(reference, plain, truth=source)
        if comparison.bound is not None:
            self.judged_by_bound += 1
        if comparison.ok:
            self.agrees[key] = True  # within the tolerance, or within the rounding error bound
            for operand in weak:
                self.candidates.pop(operand, None)  # a rewrite this value absorbs
            return
        if weak:
            self.agrees[key] = False
            self._downstream(instruction, weak)
            self._consumer_departs(weak)
            return
        if not localizer.is_live(site_key):
            self.agrees[key] = False
            return  # no result depends on it: whatever it holds, it is not the culprit
        self.departing += 1
        found = (key, comparison, plain, source.last, operands)
        if site_key in matching.weak and matching.users.get(site_key):
            self.agrees[key] = WEAK
            self.candidates[key] = found
            self.waiting[key] = len(matching.users[site_key])
            return
        if instruction.opcode in ("while", "conditional") and self.candidates:
            found = next(iter(self.candidates.values()))  # the candidate in its bodies
        self.culprit = found
        raise _Enough()

    def _consumer_departs(self, weak: list[DynKey]) -> None:
        """A consumer of candidates departed too: once every consumer of one has, nothing
        can absorb it any more, and it is the culprit."""
        for operand in weak:
            if operand not in self.candidates:
                continue
            self.waiting[operand] -= 1
            if self.waiting[operand] == 0:
                self.culprit = self.candidates[operand]
                raise _Enough()

    def _downstream(self, instruction: Instruction, operands: list[DynKey]) -> None:
        matching = self.localizer.matching
        self.departing += 1
        if len(self.reasons) < 3:
            names = ", ".join(matching.sites_after[o[0]].instruction.name
                              + (" (departs)" if o in self.agrees else " (no counterpart)")
                              for o in operands)
            self.reasons.append(f"{instruction.name} departs with its operands {names}"
                                if operands else f"{instruction.name} departs as it comes "
                                "into a loop body or branch")


EARLIER_STEP_CHUNKS = 4  # the earlier step runs ahead of the later one by ~1/4 of itself


class _EarlierStep:
    """The earlier step's values, made as far as the later step needs them: it is evaluated
    in a thread of its own that the search hands the turn to (the two never run at once),
    and that makes about 1/`EARLIER_STEP_CHUNKS` of the step's values each turn; once the
    culprit is found it stops, so the earlier step is evaluated only about as far as the
    later one. `get` gives a value (None when the step never makes it), `finish` runs it to
    its end and gives its result."""

    def __init__(self, localizer: Localizer) -> None:
        self.localizer = localizer
        self.values = localizer.before_values
        self.chunk = max(1, len(localizer.matching.sites_before) // EARLIER_STEP_CHUNKS)
        self.turn = threading.Condition()
        self.made = self.allowed = 0
        self.stopped = self.finished = False
        self.result: LiteralValue | None = None
        self.error: BaseException | None = None
        # in the caller's context (an SPMD device set by `spmd.as_device` holds there too)
        self.thread = threading.Thread(target=contextvars.copy_context().run,
                                       args=(self._evaluate,), name="earlier step", daemon=True)
        self.thread.start()

    def _evaluate(self) -> None:
        localizer = self.localizer
        with self.turn:  # nothing before the first turn: the two threads never run at once
            while not self.allowed and not self.stopped:
                self.turn.wait()
        try:
            if not self.stopped:
                self.result = localizer._evaluate(localizer.before, localizer.arguments,
                                                  self._keep)
        except BaseException as error:  # handed to the search's thread
            self.error = error
        with self.turn:
            self.finished = True
            self.turn.notify_all()

    def _keep(self, key: DynKey, instruction: Instruction, value: Any) -> None:
        localizer = self.localizer
        if key[0] in localizer.wanted:
            plain = _plain(value, instruction, localizer.sub_byte)
            localizer._keep(plain)
            self.values[key] = plain
        self.made += 1
        if self.made >= self.allowed:
            with self.turn:
                self.turn.notify_all()
                while self.made >= self.allowed and not self.stopped:
                    self.turn.wait()
        if self.stopped:
            raise _Enough()

    def get(self, key: DynKey) -> LiteralValue | None:
        value = self.values.get(key)
        if value is None and not self.finished:
            self._advance(lambda: key in self.values)
            value = self.values.get(key)
        return value

    def finish(self) -> LiteralValue | None:
        self._advance(lambda: False)
        return self.result

    def _advance(self, enough: Callable[[], bool]) -> None:
        """Hand the turn to the earlier step, a chunk at a time, until `enough` or its end."""
        with self.turn:
            while not enough() and not self.finished:
                self.allowed = self.made + self.chunk
                self.turn.notify_all()
                while self.made < self.allowed and not self.finished:
                    self.turn.wait()
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        with self.turn:
            self.stopped = True
            self.turn.notify_all()
        self.thread.join()


@dataclass
class _Pair:
    """What localizing between two modules works out whatever the inputs: the matching, and
    per site what judging it needs (`Localizer.visit_info`) and whether it computes what its
    counterpart computes (`Localizer.same_computation`; shapes and called bodies alike)."""

    before: HloModule
    after: HloModule
    matching: Matching
    visit_info: dict[Key, tuple[Key | None, tuple[Key, ...], bool]] = field(
        default_factory=dict)
    same: dict[Key, Key | None] = field(default_factory=dict)
    same_bodies: dict[tuple[str, str], bool] = field(default_factory=dict)
    same_shapes: dict[tuple[int, int], bool] = field(default_factory=dict)  # by the objects'
    # ids: the pair holds both modules, so the shapes stay alive and the ids theirs
    settled: dict[Key, DynKey] | None = None  # `Localizer.settled`
    unsettled: HloModule | None = None  # `Localizer.unsettled`
    later_sites: dict[Key, list[Key]] | None = None  # `Localizer.later_sites`


# The last pair of modules localized: triage localizes the same pair of steps once per
# execution, and the loader hands out one shared module object per step.
_last_pair: _Pair | None = None


def pair_of(before: HloModule, after: HloModule) -> _Pair:
    """The `_Pair` of the two module objects, made once for the same two in a row (it holds
    nothing that depends on the inputs)."""
    global _last_pair
    if _last_pair is None or _last_pair.before is not before or _last_pair.after is not after:
        with gc_paused():  # many tuples and dicts, no cycles
            _last_pair = _Pair(before, after, match_modules(before, after))
    return _last_pair


def matching_of(before: HloModule, after: HloModule) -> Matching:
    """`match_modules(before, after)`, made once for the same two module objects in a row
    (a `Matching` is only read once made)."""
    return pair_of(before, after).matching


class Localizer:
    """Localize the departure between `before` and `after` (two loaded HLO modules)."""

    def __init__(self, before: HloModule, after: HloModule,
                 arguments: Sequence[LiteralValue], memory_limit: int | None = None) -> None:
        from workbench.replay import memory

        self.before = before
        self.after = after
        self.arguments = list(arguments)
        # The values kept plus what the evaluations hold stay within it (default: the limit
        # in force, `--memory-limit`).
        self.memory_limit = memory.memory_limit() if memory_limit is None else memory_limit
        self.evaluations_hold = 0  # bytes the evaluations under way hold at once, at most
        self._holds: dict[int, int] = {}  # by module: what one evaluation of it holds
        pair = self._pair = pair_of(before, after)
        self.matching: Matching = pair.matching
        root = ((), before.entry.root_name)
        self.root_before = self.matching.alias_before.get(root, root)
        # The earlier-step sites to keep: counterparts, and the result (the outputs' truth).
        self.wanted = {*self.matching.counterpart.values(), self.root_before}
        self.before_values: dict[DynKey, LiteralValue] = {}  # made by `earlier`
        self.earlier: _EarlierStep | None = None
        self.shadows = _Shadows(self, perturbed=False)
        self.perturbed = _Shadows(self, perturbed=True)
        self._shadow_module: HloModule | None = None
        self._cones: dict[frozenset[str], HloModule] = {}
        self._regions: dict[DynKey, Region | None] = {}
        self._region_values: dict[tuple[DynKey, bool], LiteralValue | None] = {}
        self._region_noise: dict[DynKey, Noise | None] = {}
        self._interpreters: dict[int, Interpreter] = {}  # by module: plans compiled once
        self._same, self._visit_info = pair.same, pair.visit_info
        self._same_bodies, self._same_shapes = pair.same_bodies, pair.same_shapes
        from workbench.replay.hlo.dtypes import SUB_BYTE_WIDTHS

        self.sub_byte = SUB_BYTE_WIDTHS  # element types the evaluator stores a byte each
        self.evaluations = 0
        self.kept = 0
        self.peak = 0

    def _keep(self, value: Any) -> None:
        self.kept += _nbytes(value)
        self.peak = max(self.peak, self.kept)
        self._check_memory()

    def _check_memory(self) -> None:
        if self.kept + self.evaluations_hold > self.memory_limit:
            from workbench.sizes import format_size

            raise LocalizeError(
                f"the values localization keeps ({format_size(self.kept)}) and what its "
                f"evaluations hold at once ({format_size(self.evaluations_hold)}) exceed the "
                f"memory limit of {format_size(self.memory_limit)}; raise it with "
                "--memory-limit, or localize a pair of steps closer to the output")

    def before_value(self, key: DynKey) -> LiteralValue | None:
        """The earlier step's value at `key`, made now if the earlier step has not got there
        yet (None when it never makes it)."""
        assert self.earlier is not None, "the earlier step is evaluated while `run` runs"
        return self.earlier.get(key)

    def shadow_module(self) -> HloModule:
        """The earlier step with every float type in f64 (made once)."""
        from workbench.replay.errors import Unsupported
        from workbench.replay.hlo.shadow import shadow_module

        if self._shadow_module is None:
            try:
                self._shadow_module = shadow_module(self.before)
            except Unsupported as error:
                raise LocalizeError(f"unsupported: {error.what}") from None
        return self._shadow_module

    def visit_info(self, key: Key) -> tuple[Key | None, tuple[Key, ...], bool]:
        """What judging a later-step site's value needs, worked out once per site: its
        counterpart (None when it has none or is an alias of the site making its value), the
        sites making its operands (fusion parameters resolved), and whether it is a loop's or
        branch's parameter (a value carried in)."""
        found = self._visit_info.get(key)
        if found is None:
            matching = self.matching
            alias = matching.alias_after
            site = matching.sites_after[key]
            canonical = alias.get(key, key) == key
            found = self._visit_info[key] = (
                matching.counterpart.get(key) if canonical else None,
                tuple(alias.get(o, o) for o in site.operands),
                site.instruction.opcode == "parameter" and bool(key[0]))
        return found

    def same_computation(self, key: Key) -> Key | None:
        """The counterpart of a later-step site when the two instructions compute the same
        function of their operands' values: matched by structure, every attribute equal but
        the names and metadata (the shapes with their layouts too, the operands' as well),
        the computations they call (a reducer, a comparator) the same too, not a body whose
        values are recorded (fusion, call, while, conditional), no sub-byte values.
        Else None."""
        if key not in self._same:
            self._same[key] = self._computes_same(key)
        return self._same[key]

    def _computes_same(self, key: Key) -> Key | None:
        matching = self.matching
        other_key = matching.counterpart.get(key)
        if other_key is None or key in matching.weak:
            return None
        site = matching.sites_after[key]
        mine = site.instruction
        if mine.opcode in CALLS or self._holds_sub_byte(mine.shape):
            return None
        other = matching.sites_before[other_key]
        theirs = other.instruction
        # Matched by structure (not weak): the opcode, shape type and dimensions, operands and
        # details are known to be equal.
        if (not self._same_shape(mine.shape, theirs.shape) or _rest(mine) != _rest(theirs)
                or len(mine.operands) != len(theirs.operands)
                or len(mine.called_computations) != len(theirs.called_computations)):
            return None
        mine_by_name, theirs_by_name = site.computation.by_name, other.computation.by_name
        same_shape = self._same_shape
        for a, b in zip(mine.operands, theirs.operands, strict=True):
            if not same_shape(mine_by_name[a].shape, theirs_by_name[b].shape):
                return None
        for a, b in zip(mine.called_computations, theirs.called_computations, strict=True):
            if not self._same_body(a, b):
                return None
        return other_key

    def _same_shape(self, a: Shape, b: Shape) -> bool:
        """`a == b`, remembered by the two objects (a module's parser makes one object per
        distinct shape, so a few dozen pairs stand for every instruction's)."""
        pair = (id(a), id(b))
        same = self._same_shapes.get(pair)
        if same is None:
            same = self._same_shapes[pair] = a == b
        return same

    def _same_but_names(self, a: Instruction, b: Instruction) -> bool:
        """Every attribute of the two instructions equal but their names, operands' names,
        called computations' names, ids and metadata (a constant by its bytes)."""
        return (self._same_shape(a.shape, b.shape) and _attributes(a) == _attributes(b)
                and literal_key(a) == literal_key(b))

    def _same_body(self, after_name: str, before_name: str) -> bool:
        """The two called computations (a reducer, a comparator) compute the same: the same
        instructions in the same order on the same operand positions, calls alike."""
        pair = (after_name, before_name)
        if pair not in self._same_bodies:
            self._same_bodies[pair] = False  # guards recursion
            mine = self.after.by_name.get(after_name)
            theirs = self.before.by_name.get(before_name)
            self._same_bodies[pair] = (
                mine is not None and theirs is not None
                and len(mine.instructions) == len(theirs.instructions)
                and self._same_order(mine, theirs))
        return self._same_bodies[pair]

    def _same_order(self, mine: Computation, theirs: Computation) -> bool:
        """Two computations of as many instructions alike one by one: the same but names,
        on operands at the same positions, the root at the same position, calls alike."""
        mine_at = {i.name: n for n, i in enumerate(mine.instructions)}
        theirs_at = {i.name: n for n, i in enumerate(theirs.instructions)}
        if mine_at.get(mine.root_name) != theirs_at.get(theirs.root_name):
            return False
        for a, b in zip(mine.instructions, theirs.instructions, strict=True):
            if (not self._same_but_names(a, b)
                    or [mine_at.get(o) for o in a.operands] != [theirs_at.get(o)
                                                                for o in b.operands]
                    or len(a.called_computations) != len(b.called_computations)
                    or not all(self._same_body(x, y) for x, y in zip(
                        a.called_computations, b.called_computations, strict=True))):
                return False
        return True

    def settled(self) -> dict[Key, DynKey]:
        """The later step's values that are the earlier step's bit for bit whatever the
        inputs (site -> the earlier step's value), outside loops and branches: its parameters,
        and what computes the same as its counterpart (`same_computation`) on such values, in
        fusion and call bodies too; an entry fusion or call whose result is settled is listed
        as well. The evaluator is deterministic: they need not be computed, nor judged.
        Worked out once per pair of modules."""
        pair = self._pair
        if pair.settled is None:
            matching = self.matching
            alias = matching.alias_after
            settled = pair.settled = {}
            for key, site in matching.sites_after.items():
                if alias.get(key, key) != key or not self._outside_loops(key[0], after=True):
                    continue
                instruction = site.instruction
                if instruction.opcode == "parameter":
                    value = matching.counterpart.get(key) if not key[0] else None
                elif all(alias.get(o, o) in settled for o in site.operands):
                    value = self.same_computation(key)
                else:
                    continue
                if value is not None and self._outside_loops(value[0], after=False):
                    settled[key] = (value, ())
            for instruction in self.after.entry.instructions:
                key = ((), instruction.name)
                made = settled.get(alias.get(key, key))
                if made is not None:
                    settled[key] = made
        return pair.settled

    def _outside_loops(self, frame: Frame, after: bool) -> bool:
        """A frame of fusion and call bodies only: its values are made once per evaluation."""
        sites = self.matching.sites_after if after else self.matching.sites_before
        return all(sites[(frame[:depth], caller)].instruction.opcode in ALIASING
                   for depth, (caller, _) in enumerate(frame))

    def _holds_sub_byte(self, shape: Shape) -> bool:
        """Values of `shape` are stored otherwise than compared (`_plain`)."""
        if shape.is_tuple:
            return any(self._holds_sub_byte(part) for part in shape.tuple_shapes)
        return shape.element_type in self.sub_byte

    def unsettled(self) -> HloModule:
        """The later step as far as it needs evaluating (`unsettled_module`; made once per
        pair of modules)."""
        pair = self._pair
        if pair.unsettled is None:
            pair.unsettled = unsettled_module(self.after, self.settled())
        return pair.unsettled

    def cone(self, module: HloModule, names: frozenset[str]) -> HloModule:
        """`cone_module(module, names)` of the shadow module, made once (both shadows ask
        for the same values, and then share the compiled plans too)."""
        cut = self._cones.get(names)
        if cut is None:
            cut = self._cones[names] = cone_module(module, set(names))
        return cut

    def region(self, key: DynKey, identical: set[DynKey]) -> Region | None:
        """Where the earlier step's value at `key` is made from values both steps made bit
        for bit alike (`identical`, later-step keys): the instructions making it back to
        those values (`region_module`), and the keys of the values it starts from.
        Rounding before them is the same in both steps and explains no difference between
        them, so the value's truth is its region's in f64 on those values. None when no
        such region is found (see `region_module`); made once per key."""
        if key in self._regions:
            return self._regions[key]
        site_key, loops = key
        matching, later = self.matching, self.later_sites()

        def cut(made: Key) -> bool:
            return any((k, loops) in identical for k in later.get(made, ()))

        made = region_module(self.before, matching.sites_before, matching.alias_before,
                             site_key, cut)
        found = None if made is None else (made[0], [(k, loops) for k in made[1]])
        self._regions[key] = found
        return found

    def later_sites(self) -> dict[Key, list[Key]]:
        """The later step's sites matched to each earlier-step site (made once per pair)."""
        pair = self._pair
        if pair.later_sites is None:
            pair.later_sites = {}
            for after_key, before_key in self.matching.counterpart.items():
                pair.later_sites.setdefault(before_key, []).append(after_key)
        return pair.later_sites

    def is_live(self, key: Key) -> bool:
        """Some result of the later step depends on the value at `key`: a pass may leave a
        dead value as it likes."""
        return self._reaches_result(key, None)

    def as_read(self, key: Key, reference: LiteralValue, value: LiteralValue) -> LiteralValue:
        """`value` with the tuple elements no result depends on (a loop's counter its
        simplified form no longer keeps) taken from `reference`: they cannot depart."""
        if not isinstance(value, tuple) or not isinstance(reference, tuple) \
                or len(value) != len(reference):
            return value
        return tuple(v if self._reaches_result(key, frozenset((i,))) else r
                     for i, (r, v) in enumerate(zip(reference, value, strict=True)))

    def _reaches_result(self, key: Key, elements: frozenset[int] | None) -> bool:
        """The value at `key` (only its tuple `elements`, None: all of it) is followed
        forward to the entry's result: a `tuple` carries it in its elements, a
        `get-tuple-element` of another element does not read it, and in a loop's or
        branch's body it reaches the result when the loop does (the body runs again)."""
        matching = self.matching
        sites, alias, users = matching.sites_after, matching.alias_after, matching.users
        seen: set[tuple[Key, frozenset[int] | None]] = set()
        pending: list[tuple[Key, frozenset[int] | None]] = [(key, elements)]
        while pending:
            state = pending.pop()
            if state in seen:
                continue
            seen.add(state)
            current, elements = state
            if current == matching.root_after:
                return True
            frame = current[0]
            for depth, (caller, _) in enumerate(frame):
                loop = (frame[:depth], caller)
                if sites[loop].instruction.opcode in ("while", "conditional"):
                    pending.append((loop, None))
                    break
            for user in users.get(current, ()):
                site = sites[user]
                opcode = site.instruction.opcode
                if opcode == "tuple":
                    pending.append((user, frozenset(
                        i for i, o in enumerate(site.operands) if alias.get(o, o) == current)))
                elif (elements is None or opcode != "get-tuple-element"
                      or site.instruction.tuple_index in elements):
                    pending.append((user, None))
        return False

    def region_truth(self, key: DynKey, region: Region, perturbed: bool) -> LiteralValue | None:
        """The value at `key` made by its region (`region`) in f64 on the earlier step's
        values it starts from, or on them perturbed as a verdict perturbs a step's inputs
        (made once per key and kind)."""
        from workbench.replay.error_bound import perturb, widen
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.shadow import widened_module

        if (key, perturbed) in self._region_values:
            return self._region_values[(key, perturbed)]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with _evaluation_errors(module.name):
            found = evaluate_module(widened_module(module), perturb(values) if perturbed
                                    else [widen(v) for v in values])
        self._region_values[(key, perturbed)] = found
        return found

    def _start_values(self, starts: Sequence[DynKey]) -> list[LiteralValue] | None:
        """The earlier step's values a region starts from; None when one is not known."""
        values: list[LiteralValue] = []
        for start in starts:
            value = self.before_value(start)
            if value is None:
                return None
            values.append(value)
        return values

    def region_noise(self, key: DynKey, region: Region) -> Noise | None:
        """The value at `key` made by its region with random rounding (`hlo/noise.py`) on
        the earlier step's values it starts from (made once per key)."""
        from workbench.replay.error_bound import widen
        from workbench.replay.hlo.noise import noise_of

        if key in self._region_noise:
            return self._region_noise[key]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with _evaluation_errors(module.name):
            found = noise_of(module, [widen(v) for v in values])
        self._region_noise[key] = found
        return found

    def _evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
                  sink: Callable[[DynKey, Instruction, Any], None],
                  known: Callable[[DynKey], Any] | None = None) -> LiteralValue | None:
        """Evaluate `module` with `sink` seeing every value (`known` giving the values known
        without computing them, see `Recorder`); None when the sink ended it."""
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.interpreter import Interpreter

        self.evaluations += 1
        interpreter = self._interpreters.get(id(module))
        if interpreter is None or interpreter.module is not module:
            interpreter = self._interpreters[id(module)] = Interpreter(module)
            with _evaluation_errors(module.name):
                self._holds[id(module)] = interpreter.holds_at_once(module.entry.name)
            # The earlier and the later step run in turns, a shadow or a region inside a
            # visit: at most three evaluations are under way at once.
            self.evaluations_hold = sum(sorted(self._holds.values())[-3:])
            self._check_memory()
        with _evaluation_errors(module.name):
            try:
                return evaluate_module(module, arguments, Recorder(sink, known), interpreter)
            except _Enough:
                return None

    def run(self, before_step: Step, after_step: Step) -> Localization:
        """Localize, with the cyclic collector paused (`gc_paused`): the keys, tuples and
        dicts made per value form no cycles (the localizer's few are collected after the
        pause), and a collection passing over the modules' instructions every few thousand of
        them costs more than the judging."""
        with gc_paused():
            try:
                return self._run(before_step, after_step)
            finally:
                self._let_go()

    def _let_go(self) -> None:
        """Drop the run's values and evaluators (the result keeps what it needs). The
        interpreters' observers and the shadows refer back to the localizer: left in place,
        the values would wait for a collection (the pause puts them in the oldest generation)
        instead of being freed with the localizer."""
        self.before_values = {}
        self.shadows.values.clear()
        self.perturbed.values.clear()
        self._interpreters.clear()
        self._holds.clear()
        self._cones.clear()
        self._regions.clear()
        self._region_values.clear()
        self._region_noise.clear()
        self._shadow_module = None
        self.earlier = None

    def _run(self, before_step: Step, after_step: Step) -> Localization:
        start = time.perf_counter()
        self.evaluations = self.kept = self.peak = self.evaluations_hold = 0
        self._holds.clear()
        self.shadows = _Shadows(self, perturbed=False)
        self.perturbed = _Shadows(self, perturbed=True)
        search = _Search(self)
        alias = self.matching.alias_after
        for key in self.settled():  # bit for bit the earlier step's values, never judged
            made = (alias.get(key, key), ())
            search.identical.add(made)
            search.agrees[made] = True
        earlier = self.earlier = _EarlierStep(self)
        try:
            after_result = self._evaluate(self.unsettled(), self.arguments, search.visit,
                                          search.known)
            before_result = earlier.finish() if search.culprit is None else None
        finally:
            earlier.stop()
        matching = self.matching
        result = Localization(before_step, after_step, matched=len(matching.counterpart),
                              unmatched=[s.label for s in matching.unmatched_after],
                              beyond_tolerance=search.judged_by_bound,
                              departing=search.departing)
        if search.culprit is None:
            assert before_result is not None and after_result is not None
            result.outputs = self._judge_outputs(before_result, after_result)
            if not result.outputs.ok and search.candidates:
                search.culprit = next(iter(search.candidates.values()))
        if search.culprit is not None:
            self._found(result, *search.culprit)
        else:
            assert result.outputs is not None
            result.explanation = self._explanation(search, result.outputs)
        result.evaluations = self.evaluations
        result.kept_bytes = self.peak
        result.seconds = time.perf_counter() - start
        return result

    def _judge_outputs(self, before: LiteralValue, after: LiteralValue) -> Comparison:
        """The later step's result against the earlier's, by the verdicts' rule (the bound of
        the earlier step's result)."""
        return compare(before, after, truth=_ValueTruth(self, (self.root_before, ())))

    def _explanation(self, search: _Search, outputs: Comparison) -> str:
        """Why no single instruction explains the departure (or that there is none)."""
        matching = self.matching
        if outputs.ok:
            text = (f"the later step's result agrees with the earlier step's ({outputs.summary})"
                    ": there is no departure to localize")
            if search.departing:
                text += (f"; {search.departing} intermediate value(s) differ where their "
                         "operands have no counterpart (a rewrite the result absorbs)")
            return text
        if not search.departing:
            root = matching.root_after
            if matching.counterpart.get(root) is None:
                text = ("no matched instruction departs; the departure only shows at the "
                        f"output, whose instruction {matching.sites_after[root].instruction.name}"
                        " has no counterpart before the pass")
            else:
                text = ("no instruction of the later step departs from its counterpart beyond "
                        "the rounding error bound")
        else:
            text = ("no single instruction explains it: every departing value has an operand "
                    "that departs too or has no counterpart (" + "; ".join(search.reasons)
                    + ")")
        unmatched = [s.label for s in matching.unmatched_after]
        if unmatched:
            more = f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else ""
            text += f"; values with no counterpart: {', '.join(unmatched[:5])}{more}"
        if search.missing:
            text += (f"; {search.missing} matched value(s) the earlier step never made (a loop "
                     "ran a different number of times?)")
        return text

    def _found(self, result: Localization, key: DynKey, comparison: Comparison,
               after: LiteralValue, truth: Truth | None, operands: list[DynKey]) -> None:
        matching = self.matching
        before_values = self.before_values
        site = matching.sites_after[key[0]]
        before_key = (matching.counterpart[key[0]], key[1])
        other = matching.sites_before[before_key[0]]
        result.instruction = describe(self.after, site, key[1])
        result.counterpart = describe(self.before, other, key[1])
        result.comparison = comparison
        result.elements = differing_elements(before_values[before_key], after, comparison,
                                             truth)
        result.site, result.counterpart_site, result.culprit_loops = site, other, key[1]
        result.operand_keys = [(matching.counterpart[o[0]], o[1]) for o in operands]
        result.counterpart_operand_keys = [
            (matching.alias_before.get(o, o), key[1]) for o in other.operands]
        kept = (*result.operand_keys, *result.counterpart_operand_keys, before_key)
        result.values = {k: before_values[k] for k in kept if k in before_values}
        result.shapes = {k: matching.sites_before[k[0]].instruction.shape for k in kept}


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
                     memory_limit: int | None = None) -> Localization:
    """Localize between two loaded modules (no text lines; see `localize_steps`)."""
    return Localizer(before, after, arguments, memory_limit).run(before_step, after_step)


def localize_steps(root: Path, before_step: Step, after_step: Step,
                   arguments: Sequence[LiteralValue],
                   memory_limit: int | None = None) -> Localization:
    """Localize the departure between two HLO steps of a dump, with the instructions' text
    lines and neighbours from the steps' text dumps. Raises `LocalizeError`."""
    from workbench.loader import ReadError, load_step_hlo
    from workbench.replay.localize_text import attach_text

    if before_step.ir != "hlo" or after_step.ir != "hlo":
        raise LocalizeError("these are not HLO steps (MLIR steps: localize_backend_steps)")
    try:
        before, after = load_step_hlo(root, before_step), load_step_hlo(root, after_step)
    except ReadError as error:
        raise LocalizeError(str(error)) from None
    result = localize_modules(before, after, arguments, before_step, after_step, memory_limit)
    attach_text(root, result)
    return result

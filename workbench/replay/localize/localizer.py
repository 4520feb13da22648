"""From the culprit pass to the culprit instruction: which value did the pass get wrong?

Two steps of an HLO module (the step before a pass and the step after it) are evaluated on the
same inputs while an observer (`hlo.interpreter.Observer`) sees every intermediate value:
the entry, fusion and called bodies, loop bodies once per iteration. Instructions of the later
step are matched to the earlier step's (`match.py`), each matched value is judged
against its counterpart by the rule verdicts use (`compare` with a `TruthSource`: within the
tolerance, else within the rounding error bound of the f64 truth, then of the truth on
perturbed inputs; `error_bound.truth_of`), and the culprit is the first value of the later
step, in evaluation order, that departs while every operand agrees (`search.Search`).

The truth of a value is that of its *region* (`regions.region_module`): the earlier step's
instructions making it, back to the values both steps made bit for bit alike, evaluated in f64
on those values (and on them perturbed). Rounding before them is common to both steps and
explains no difference between them; a step treated as one region is what a verdict judges.
Where no region is found (it would pass a loop's result, or grow past `REGION_LIMIT`), the
truth is the earlier step's own f64 shadow (`truth.Shadows`, `regions.cone_module`).

Cost and memory: the earlier step as far as the later step gets (`earlier_step.EarlierStep`:
the two are evaluated in turns, keeping the earlier step's values some later instruction is
matched to); of the later step, only what it does not make bit for bit as the earlier step did
(`Localizer.settled`: an instruction computing the same as its counterpart on such values,
whatever the inputs; `unsettled_module`), judged as it is made up to the culprit, so it is not
kept (where the values turn out alike anyway, the earlier step's are taken, `Search.known`);
and the regions of the values judged beyond the tolerance. Values kept are counted with what
the evaluations running at once hold (`Interpreter.holds_at_once`: the earlier and the later
step, and a shadow, each sized from its declared shapes), and beyond the memory limit
(`--memory-limit`, `replay.memory`) localization stops with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.gc_pause import gc_paused
from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue, Shape
from workbench.model import Step
from workbench.replay.judge.compare import Comparison, Truth, compare
from workbench.replay.localize.earlier_step import EarlierStep
from workbench.replay.localize.match import (
    ALIASING,
    CALLS,
    DETAILS,
    Frame,
    Key,
    Matching,
    literal_key,
    match_modules,
)
from workbench.replay.localize.recorder import Enough, Recorder, value_bytes
from workbench.replay.localize.regions import cone_module, region_module, unsettled_module
from workbench.replay.localize.result import (
    DynKey,
    Localization,
    LocalizeError,
    Region,
    describe,
    differing_elements,
)
from workbench.replay.localize.search import Search
from workbench.replay.localize.truth import Shadows, ValueTruth, evaluation_errors

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.hlo.noise import Noise

_NAMING = frozenset(("name", "operands", "called_computations", "id", "metadata", "literal",
                     "shape"))
_attributes = attrgetter(*(f.name for f in fields(Instruction) if f.name not in _NAMING))
# The same but the details a structural match already found equal (`match.DETAILS`,
# compared with the opcode, the shape's type and dimensions and a constant's bytes).
_rest = attrgetter(*(f.name for f in fields(Instruction)
                     if f.name not in _NAMING and f.name not in DETAILS))


@dataclass
class StepPair:
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
_last_pair: StepPair | None = None


def pair_of(before: HloModule, after: HloModule) -> StepPair:
    """The `StepPair` of the two module objects, made once for the same two in a row (it holds
    nothing that depends on the inputs)."""
    global _last_pair
    if _last_pair is None or _last_pair.before is not before or _last_pair.after is not after:
        with gc_paused():  # many tuples and dicts, no cycles
            _last_pair = StepPair(before, after, match_modules(before, after))
    return _last_pair


def matching_of(before: HloModule, after: HloModule) -> Matching:
    """`match_modules(before, after)`, made once for the same two module objects in a row
    (a `Matching` is only read once made)."""
    return pair_of(before, after).matching


class Localizer:
    """Localize the departure between `before` and `after` (two loaded HLO modules)."""

    def __init__(self, before: HloModule, after: HloModule,
                 arguments: Sequence[LiteralValue], memory_limit: int | None = None) -> None:
        from workbench.replay.processes import memory

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
        self.earlier: EarlierStep | None = None
        self.shadows = Shadows(self, perturbed=False)
        self.perturbed = Shadows(self, perturbed=True)
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

    def keep(self, value: Any) -> None:
        self.kept += value_bytes(value)
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
        """Values of `shape` are stored otherwise than compared (`plain_value`)."""
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
        those values (`regions.region_module`), and the keys of the values it starts from.
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
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.shadow import widened_module
        from workbench.replay.judge.error_bound import perturb, widen

        if (key, perturbed) in self._region_values:
            return self._region_values[(key, perturbed)]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with evaluation_errors(module.name):
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
        from workbench.replay.hlo.noise import noise_of
        from workbench.replay.judge.error_bound import widen

        if key in self._region_noise:
            return self._region_noise[key]
        module, starts = region
        values = self._start_values(starts)
        if values is None:
            return None
        with evaluation_errors(module.name):
            found = noise_of(module, [widen(v) for v in values])
        self._region_noise[key] = found
        return found

    def evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
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
            with evaluation_errors(module.name):
                self._holds[id(module)] = interpreter.holds_at_once(module.entry.name)
            # The earlier and the later step run in turns, a shadow or a region inside a
            # visit: at most three evaluations are under way at once.
            self.evaluations_hold = sum(sorted(self._holds.values())[-3:])
            self._check_memory()
        with evaluation_errors(module.name):
            try:
                return evaluate_module(module, arguments, Recorder(sink, known), interpreter)
            except Enough:
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
        self.shadows = Shadows(self, perturbed=False)
        self.perturbed = Shadows(self, perturbed=True)
        search = Search(self)
        alias = self.matching.alias_after
        for key in self.settled():  # bit for bit the earlier step's values, never judged
            made = (alias.get(key, key), ())
            search.identical.add(made)
            search.agrees[made] = True
        earlier = self.earlier = EarlierStep(self)
        try:
            after_result = self.evaluate(self.unsettled(), self.arguments, search.visit,
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
        return compare(before, after, truth=ValueTruth(self, (self.root_before, ())))

    def _explanation(self, search: Search, outputs: Comparison) -> str:
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
    from workbench.replay.localize.text import attach_text

    if before_step.ir != "hlo" or after_step.ir != "hlo":
        raise LocalizeError("these are not HLO steps (MLIR steps: localize_backend_steps)")
    try:
        before, after = load_step_hlo(root, before_step), load_step_hlo(root, after_step)
    except ReadError as error:
        raise LocalizeError(str(error)) from None
    result = localize_modules(before, after, arguments, before_step, after_step, memory_limit)
    attach_text(root, result)
    return result

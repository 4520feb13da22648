"""What localizing between two steps works out whatever the inputs: the instructions matched
(`match.py`), and per site what judging it needs, whether it computes what its counterpart
computes, which values are the earlier step's bit for bit (settled), and which reach the
result. Made once per pair of module objects (`pair_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter

from workbench.gc_pause import gc_paused
from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue, Shape
from workbench.replay.hlo.dtypes import SUB_BYTE_WIDTHS
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
from workbench.replay.localize.regions import unsettled_module
from workbench.replay.localize.result import DynKey

# What `same_computation` compares besides the shape (names and metadata do not change
# what an instruction computes; a constant is compared by its bytes).
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
    per site what judging it needs (`visit_info`) and whether it computes what its
    counterpart computes (`same_computation`; shapes and called bodies alike)."""

    before: HloModule
    after: HloModule
    matching: Matching
    visit_infos: dict[Key, tuple[Key | None, tuple[Key, ...], bool]] = field(
        default_factory=dict)
    same: dict[Key, Key | None] = field(default_factory=dict)
    same_bodies: dict[tuple[str, str], bool] = field(default_factory=dict)
    same_shapes: dict[tuple[int, int], bool] = field(default_factory=dict)  # by the objects'
    # ids: the pair holds both modules, so the shapes stay alive and the ids theirs
    _settled: dict[Key, DynKey] | None = None
    _unsettled: HloModule | None = None
    _later_sites: dict[Key, list[Key]] | None = None

    def visit_info(self, key: Key) -> tuple[Key | None, tuple[Key, ...], bool]:
        """What judging a later-step site's value needs, worked out once per site: its
        counterpart (None when it has none or is an alias of the site making its value), the
        sites making its operands (fusion parameters resolved), and whether it is a loop's or
        branch's parameter (a value carried in)."""
        found = self.visit_infos.get(key)
        if found is None:
            matching = self.matching
            alias = matching.alias_after
            site = matching.sites_after[key]
            canonical = alias.get(key, key) == key
            found = self.visit_infos[key] = (
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
        if key not in self.same:
            self.same[key] = self._computes_same(key)
        return self.same[key]

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
        same = self.same_shapes.get(pair)
        if same is None:
            same = self.same_shapes[pair] = a == b
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
        if pair not in self.same_bodies:
            self.same_bodies[pair] = False  # guards recursion
            mine = self.after.by_name.get(after_name)
            theirs = self.before.by_name.get(before_name)
            self.same_bodies[pair] = (
                mine is not None and theirs is not None
                and len(mine.instructions) == len(theirs.instructions)
                and self._same_order(mine, theirs))
        return self.same_bodies[pair]

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
        if self._settled is None:
            matching = self.matching
            alias = matching.alias_after
            settled = self._settled = {}
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
        return self._settled

    def _outside_loops(self, frame: Frame, after: bool) -> bool:
        """A frame of fusion and call bodies only: its values are made once per evaluation."""
        sites = self.matching.sites_after if after else self.matching.sites_before
        return all(sites[(frame[:depth], caller)].instruction.opcode in ALIASING
                   for depth, (caller, _) in enumerate(frame))

    def _holds_sub_byte(self, shape: Shape) -> bool:
        """Values of `shape` are stored otherwise than compared (`plain_value`)."""
        if shape.is_tuple:
            return any(self._holds_sub_byte(part) for part in shape.tuple_shapes)
        return shape.element_type in SUB_BYTE_WIDTHS

    def unsettled(self) -> HloModule:
        """The later step as far as it needs evaluating (`unsettled_module`; made once per
        pair of modules)."""
        if self._unsettled is None:
            self._unsettled = unsettled_module(self.after, self.settled())
        return self._unsettled

    def later_sites(self) -> dict[Key, list[Key]]:
        """The later step's sites matched to each earlier-step site (made once per pair)."""
        if self._later_sites is None:
            self._later_sites = {}
            for after_key, before_key in self.matching.counterpart.items():
                self._later_sites.setdefault(before_key, []).append(after_key)
        return self._later_sites

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

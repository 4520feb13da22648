"""Match the instructions of two steps of one HLO module across a pass.

A pass renames, fuses, reorders and rewrites instructions, so names alone do not match them.
Each instruction is a *site*: the instruction in its calling context (a fusion's body is
walked where the fusion is, a loop body where the while is). Sites of the later step are
matched in evaluation order, by value numbering across the two modules: an instruction whose
opcode, shape, attributes and operands' counterparts equal those of an earlier-step
instruction computes the same value. Where the pass changed the opcode alone, the same
operands, shape and attributes decide; where it changed attributes alone, the same operands,
shape, opcode and name (other attributes under another name, a broadcast's dimensions say,
make another value, not a counterpart). These looser matches are *weak*: a departure there
may be a rewrite that later values absorb (see `search.Search`). Where the operands
themselves have no counterparts, the same name, opcode and shape, then the same `op_name`
metadata, opcode and shape (each when unique) decide. Ties go to the same name, then the
same `op_name`, then the same source location.

A fusion's (or call's) parameter is the same value as the fusion's operand, and the fusion's
result the same as its body's root: such sites are *aliases* of the one that makes the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, Shape

CALLS = frozenset(("fusion", "call", "while", "conditional"))  # bodies whose values are kept
ALIASING = frozenset(("fusion", "call"))  # their parameters and results are other sites

Frame = tuple[tuple[str, str], ...]  # (caller instruction, called computation) from the entry
Key = tuple[Frame, str]  # a site: its frame and the instruction's name


@dataclass(slots=True)
class Site:
    """One instruction in its calling context; `operands` are the operands' site keys."""

    key: Key
    computation: Computation
    instruction: Instruction
    operands: list[Key]

    @property
    def label(self) -> str:
        return f"{self.computation.name}/{self.instruction.name}"

    def context_text(self, loops: tuple[int, ...] = ()) -> str:
        """Where the instruction runs: `entry`, or the chain of callers, loop iterations."""
        frame = self.key[0]
        if not frame:
            return "entry computation"
        parts = [f"{callee} called by {caller}" for caller, callee in reversed(frame)]
        text = ", in ".join(parts)
        if loops:
            text += ", iteration " + ".".join(str(i) for i in loops)
        return text


@dataclass
class Matching:
    """Both steps' sites, aliases (a site -> the site making its value) and the later
    step's canonical sites' counterparts in the earlier step."""

    sites_before: dict[Key, Site]
    sites_after: dict[Key, Site]
    alias_before: dict[Key, Key]
    alias_after: dict[Key, Key]
    counterpart: dict[Key, Key] = field(default_factory=dict)
    weak: set[Key] = field(default_factory=set)  # matched by a looser key than structure
    how: dict[Key, str] = field(default_factory=dict)  # a weak match: what decided it
    users: dict[Key, list[Key]] = field(default_factory=dict)  # later-step site -> consumers
    unmatched_after: list[Site] = field(default_factory=list)
    root_after: Key = ((), "")

    def matched_by(self, key: Key) -> str:
        """How the later step's site `key` was matched to its counterpart, in words."""
        if self.sites_after[key].instruction.opcode == "parameter":
            return "the same parameter"
        return self.how.get(key, STRUCTURE)


STRUCTURE = "structure (the same opcode, shape, attributes and operands)"
OPCODE_CHANGED = "its operands, shape and attributes (the pass changed the opcode)"
ATTRIBUTES_CHANGED = "its operands, opcode, shape and name (the pass changed an attribute)"
BY_NAME = "its name, opcode and shape (its operands have no counterparts)"
BY_OP_NAME = "its op_name, opcode and shape (its operands have no counterparts)"


def _shape_key(shape: Shape) -> Any:
    if shape.is_tuple:
        return tuple(_shape_key(s) for s in shape.tuple_shapes)
    return shape.element_type, tuple(shape.dims)


def literal_key(instruction: Instruction) -> Any:
    if instruction.literal_elided:
        return ("elided", instruction.name)
    value = instruction.literal
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(np.asarray(v).tobytes() for v in value)
    return np.asarray(value).tobytes()


DETAILS = ("dimensions", "slice", "tuple_index", "comparison_direction", "dynamic_slice_sizes",
           "padding_config", "dot_dimension_numbers", "window", "gather_dimension_numbers",
           "gather_slice_sizes", "scatter_dimension_numbers", "custom_call_target",
           "convolution_dimension_numbers", "exponent_bits", "mantissa_bits", "fft_type",
           "fft_length")
_attributes = attrgetter(*DETAILS)


def _details(instruction: Instruction) -> tuple:
    """The attributes that decide what an instruction computes besides opcode and operands."""
    i = instruction
    return (_attributes(i), literal_key(i),
            i.shape.layout if i.opcode == "bitcast" else None)  # a bitcast reads the layout


def flatten(module: HloModule) -> tuple[dict[Key, Site], dict[Key, Key]]:
    """Every site of `module` in evaluation order, and the aliases."""
    sites: dict[Key, Site] = {}
    alias: dict[Key, Key] = {}

    def walk(computation: Computation, frame: Frame, caller: Site | None) -> None:
        for instruction in computation.instructions:
            key = (frame, instruction.name)
            site = Site(key, computation, instruction, [(frame, o) for o in instruction.operands])
            sites[key] = site
            if (instruction.opcode == "parameter" and caller is not None
                    and caller.instruction.opcode in ALIASING):
                number = instruction.parameter_number or 0
                if number < len(caller.operands):
                    operand = caller.operands[number]
                    alias[key] = alias.get(operand, operand)
            if instruction.opcode not in CALLS:
                continue
            for callee in instruction.called_computations:
                called = module.by_name.get(callee)
                if called is None:
                    continue
                inner = (*frame, (instruction.name, callee))
                walk(called, inner, site)
                if instruction.opcode in ALIASING:
                    root = (inner, called.root_name)
                    alias[key] = alias.get(root, root)

    walk(module.entry, (), None)
    return sites, alias


def _pick(candidates: list[Key], site: Site, sites: dict[Key, Site]) -> Key | None:
    """The best of several candidates: same name, then same op_name, then same source."""
    if len(candidates) < 2:
        return candidates[0] if candidates else None
    instruction = site.instruction
    op_name = instruction.metadata.op_name if instruction.metadata else ""

    def score(key: Key) -> tuple:
        other = sites[key].instruction
        other_op = other.metadata.op_name if other.metadata else ""
        same_source = (instruction.metadata is not None and other.metadata is not None
                       and instruction.metadata.stack_frame_id
                       == other.metadata.stack_frame_id)
        return (other.name != instruction.name, not op_name or other_op != op_name,
                not same_source, other.opcode != instruction.opcode)

    return min(candidates, key=score)


def match_modules(before: HloModule, after: HloModule) -> Matching:
    """Match every canonical site of `after` to a site of `before` where one fits."""
    sites_before, alias_before = flatten(before)
    sites_after, alias_after = flatten(after)
    matching = Matching(sites_before, sites_after, alias_before, alias_after)
    canonical_before = [s for k, s in sites_before.items() if alias_before.get(k, k) == k]

    shape_keys: dict[int, Any] = {}  # by the shape object: a parser shares equal shapes

    def shape_key(shape: Shape) -> Any:
        found = shape_keys.get(id(shape))
        if found is None:
            found = shape_keys[id(shape)] = _shape_key(shape)
        return found

    exact: dict[Any, list[Key]] = {}
    loose: dict[Any, list[Key]] = {}
    renamed: dict[Any, list[Key]] = {}
    by_name: dict[Any, list[Key]] = {}
    by_op_name: dict[Any, list[Key]] = {}
    for site in canonical_before:  # each part of a signature computed once
        i, key = site.instruction, site.key
        shape, details = shape_key(i.shape), _details(i)
        operands = tuple([alias_before.get(o, o) for o in site.operands])
        exact.setdefault((i.opcode, shape, operands, details), []).append(key)
        by_name.setdefault((i.name, i.opcode, shape), []).append(key)
        if operands:
            loose.setdefault((shape, operands, details), []).append(key)
            renamed.setdefault((shape, operands, i.opcode, i.name), []).append(key)
        if i.metadata and i.metadata.op_name:
            by_op_name.setdefault((i.metadata.op_name, i.opcode, shape), []).append(key)
    entry_parameters = {s.instruction.parameter_number: s.key for s in canonical_before
                        if not s.key[0] and s.instruction.opcode == "parameter"}
    counterpart = matching.counterpart

    for key, site in sites_after.items():
        if alias_after.get(key, key) != key:
            continue
        instruction = site.instruction
        found: Key | None = None
        structural = True  # parameters match by number: as strong as structure
        if instruction.opcode == "parameter":
            found = _parameter_counterpart(site, matching, entry_parameters)
        else:
            counterparts = [counterpart.get(alias_after.get(o, o)) for o in site.operands]
            shape = shape_key(instruction.shape)
            structural = None not in counterparts
            if structural:
                mapped = tuple(o for o in counterparts if o is not None)
                details = _details(instruction)
                found = _pick(exact.get((instruction.opcode, shape, mapped, details), []),
                              site, sites_before)
                if found is None and mapped:
                    found = _pick(loose.get((shape, mapped, details), []), site, sites_before)
                    how = OPCODE_CHANGED
                    if found is None:  # the same instruction with other attributes
                        found = _pick(renamed.get((shape, mapped, instruction.opcode,
                                                   instruction.name), []), site, sites_before)
                        how = ATTRIBUTES_CHANGED
                    if found is not None:
                        matching.weak.add(key)
                        matching.how[key] = how
            # Names and op_names decide only where the operands have no counterparts: an
            # instruction whose operands all match but no instruction of the same structure
            # is new (a rewrite's result), and pairing it by name would cry wolf.
            if found is None and not structural:
                named = by_name.get((instruction.name, instruction.opcode, shape), [])
                found = named[0] if len(named) == 1 else None
                matching.how[key] = BY_NAME
            if (found is None and not structural and instruction.metadata
                    and instruction.metadata.op_name):
                same = by_op_name.get((instruction.metadata.op_name, instruction.opcode,
                                       shape), [])
                found = same[0] if len(same) == 1 else None
                matching.how[key] = BY_OP_NAME
        if found is None:
            matching.how.pop(key, None)
            matching.unmatched_after.append(site)
        else:
            counterpart[key] = found
            if not structural:
                matching.weak.add(key)
    root = ((), after.entry.root_name)
    matching.root_after = alias_after.get(root, root)
    for key, site in sites_after.items():
        if alias_after.get(key, key) == key:
            for operand in {alias_after.get(o, o) for o in site.operands}:
                matching.users.setdefault(operand, []).append(key)
    return matching


def _parameter_counterpart(site: Site, matching: Matching,
                           entry_parameters: dict[int | None, Key]) -> Key | None:
    """An entry parameter: the same number; a loop body's or branch's parameter: the same
    parameter of the counterpart loop's (or conditional's) computation."""
    frame, _ = site.key
    number = site.instruction.parameter_number
    if not frame:
        return entry_parameters.get(number)
    caller_name, callee = frame[-1]
    caller_key = (frame[:-1], caller_name)
    caller = matching.sites_after.get(caller_key)
    other_key = matching.counterpart.get(caller_key)
    if caller is None or other_key is None:
        return None
    other = matching.sites_before[other_key]
    position = caller.instruction.called_computations.index(callee)
    if position >= len(other.instruction.called_computations):
        return None
    other_callee = other.instruction.called_computations[position]
    inner = (*other_key[0], (other.instruction.name, other_callee))
    for key, candidate in matching.sites_before.items():
        if (key[0] == inner and candidate.instruction.opcode == "parameter"
                and candidate.instruction.parameter_number == number):
            return key
    return None

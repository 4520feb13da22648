"""What breakpoints test about a step, read from its IR on demand.

`StepInfo` carries a step's pass, its op counts and those of the step before, the source
locations whose IR this step changed, and the action tags of its pass run. `DumpFacts` reads
them lazily (only what enabled breakpoints need), through the store of derived facts
(`workbench.facts`) that the timeline and statistics use too.

Source locations: HLO carries them in instruction metadata (`stack_frame_id` into the
`StackFrames`/`FileLocations`/`FileNames` tables, or `source_file`/`source_line`); MLIR in
`loc("file":line:col)` attributes, often through `#locN = loc(...)` aliases, `callsite(...)`
and `fused[...]` wrappers. A step changes a location's IR when the ops attributed to it
differ from the previous step's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.facts import FACTS, SMALL, FactKind
from workbench.formats.action_log import load_module_actions
from workbench.formats.mlir_text import OP_LINE
from workbench.model import IRKind, Module, Source, Step
from workbench.sources import ReadError, read_text
from workbench.stats import step_stats

Location = tuple[str, int]  # (file as printed, line)
LocationOps = dict[Location, tuple[str, ...]]  # location -> sorted op names attributed to it
LOCATIONS: FactKind[LocationOps] = FactKind("locations", SMALL, per_byte=0.5, fixed=512)


@dataclass
class StepInfo:
    """`has_previous` is False for the first step of its kind of IR: nothing to compare with,
    so nothing "appears" or "changes" there."""

    step: Step
    has_previous: bool = False
    ops: dict[str, int] = field(default_factory=dict)
    ops_before: dict[str, int] = field(default_factory=dict)
    changed_locations: set[Location] = field(default_factory=set)
    action_tags: set[str] = field(default_factory=set)


def hlo_location_ops(text: str) -> LocationOps:
    """HLO: each source location and the opcodes of the instructions attributed to it."""
    from workbench.formats.hlo_text import parse_hlo_text

    module = parse_hlo_text(text)
    found: dict[Location, list[str]] = {}
    for computation in module.computations:
        for instruction in computation.instructions:
            location = module.source_location(instruction)
            if location is not None:
                found.setdefault(location, []).append(instruction.opcode)
    return {location: tuple(sorted(ops)) for location, ops in found.items()}


_LOC_ALIAS_DEF = re.compile(r"^(#loc\d*)\s*=\s*(loc\(.*\))\s*$")
_FILE_LINE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+)(?::\d+)?')
_ALIAS_REF = re.compile(r"#loc\d*\b")
_TRAILING_LOC = re.compile(r"loc\((.*)\)\s*$")


def mlir_location_ops(text: str) -> LocationOps:
    """MLIR: each `file:line` and the ops whose trailing `loc(...)` resolves to it."""
    lines = text.splitlines()
    aliases: dict[str, str] = {}
    for line in lines:
        match = _LOC_ALIAS_DEF.match(line)
        if match:
            aliases[match.group(1)] = match.group(2)
    resolved: dict[str, set[Location]] = {}

    def resolve(body: str, seen: frozenset[str] = frozenset()) -> set[Location]:
        locations = {(m.group(1), int(m.group(2))) for m in _FILE_LINE.finditer(body)}
        for alias in _ALIAS_REF.findall(body):
            if alias in seen or alias not in aliases:
                continue
            if alias not in resolved:
                resolved[alias] = resolve(aliases[alias], seen | {alias})
            locations |= resolved[alias]
        return locations

    found: dict[Location, list[str]] = {}
    for line in lines:
        if line.startswith("#loc"):
            continue
        op = OP_LINE.match(line)
        loc = _TRAILING_LOC.search(line)
        if op is None or loc is None:
            continue
        for location in resolve(loc.group(1)):
            found.setdefault(location, []).append(op.group(1))
    return {location: tuple(sorted(ops)) for location, ops in found.items()}


def _location_ops(root: Path, source: Source, ir: IRKind) -> LocationOps:
    """Source locations of a step's IR; none when it cannot be read or parsed."""
    try:
        text = read_text(root, source)
        return hlo_location_ops(text) if ir == "hlo" else mlir_location_ops(text)
    except ReadError:  # unreadable, or HLO text the parser rejects: no locations known
        return {}


def changed_locations(before: LocationOps, after: LocationOps) -> set[Location]:
    return {loc for loc in set(before) | set(after) if before.get(loc) != after.get(loc)}


def location_matches(location: Location, file: str, line: int) -> bool:
    """`loc:model.py:4` matches `/home/me/model.py` line 4: the file is a path suffix."""
    printed, printed_line = location
    if printed_line != line:
        return False
    return printed == file or printed.endswith("/" + file)


def action_tags_of(root: Path, module: Module) -> Callable[[Step], set[str]]:
    """step -> the tags of the actions its pass run contained (empty without an action log,
    or when the log cannot be read)."""
    try:
        loaded = load_module_actions(root, module)
    except ReadError:
        loaded = None
    tags: dict[int, set[str]] = {}
    if loaded is not None:
        log, joined = loaded
        by_index = {action.index: action for action in log.actions}
        for index, step in joined.items():
            tags[step.index] = {action.tag for action in by_index[index].walk()}
    return lambda step: tags.get(step.index, set())


class DumpFacts:
    """`StepInfo` for the steps of one module, read from the dump when first asked for."""

    def __init__(self, root: Path, module: Module,
                 action_tags: Callable[[Step], set[str]] | None = None) -> None:
        self.root = root
        self.module = module
        self.action_tags = action_tags

    def ops(self, step: Step) -> dict[str, int]:
        try:
            return step_stats(self.root, step).ops
        except ReadError:
            return {}

    def location_ops(self, step: Step) -> LocationOps:
        if step.text is None:
            return {}
        text = step.text
        try:
            return FACTS.make(LOCATIONS, self.root, [text],
                              lambda: _location_ops(self.root, text, step.ir), params=(step.ir,))
        except ReadError:  # the file is gone
            return {}

    def previous(self, step: Step) -> Step | None:
        """The step before in the timeline, when it holds the same kind of IR."""
        if step.index == 0:
            return None
        previous = self.module.steps[step.index - 1]
        return previous if previous.ir == step.ir else None

    def info(self, step: Step, *, ops: bool = False, locations: bool = False) -> StepInfo:
        previous = self.previous(step)
        info = StepInfo(step, has_previous=previous is not None)
        if ops:
            info.ops = self.ops(step)
            info.ops_before = self.ops(previous) if previous is not None else {}
        if locations and previous is not None:
            info.changed_locations = changed_locations(self.location_ops(previous),
                                                       self.location_ops(step))
        if self.action_tags is not None:
            info.action_tags = self.action_tags(step)
        return info


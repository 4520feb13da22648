"""What breakpoints test about a step, read from its IR on demand.

`StepInfo` carries a step's pass, its op counts and those of the step before, the source
locations whose IR this step changed, and the action tags of its pass run. `DumpFacts` reads
them lazily (only what enabled breakpoints need) and caches them per step.

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

from workbench.model import Module, Step
from workbench.sources import ReadError, read_text
from workbench.stats import ir_stats

Location = tuple[str, int]  # (file as printed, line)
LocationOps = dict[Location, tuple[str, ...]]  # location -> sorted op names attributed to it


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
_MLIR_OP = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*\.[\w$.]+)"?')


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
        op = _MLIR_OP.match(line)
        loc = _TRAILING_LOC.search(line)
        if op is None or loc is None:
            continue
        for location in resolve(loc.group(1)):
            found.setdefault(location, []).append(op.group(1))
    return {location: tuple(sorted(ops)) for location, ops in found.items()}


def changed_locations(before: LocationOps, after: LocationOps) -> set[Location]:
    return {loc for loc in set(before) | set(after) if before.get(loc) != after.get(loc)}


def location_matches(location: Location, file: str, line: int) -> bool:
    """`loc:model.py:4` matches `/home/me/model.py` line 4: the file is a path suffix."""
    printed, printed_line = location
    if printed_line != line:
        return False
    return printed == file or printed.endswith("/" + file)


class DumpFacts:
    """`StepInfo` for the steps of one module, read from the dump when first asked for."""

    def __init__(self, root: Path, module: Module,
                 action_tags: Callable[[Step], set[str]] | None = None) -> None:
        self.root = root
        self.module = module
        self.action_tags = action_tags
        self._ops: dict[int, dict[str, int]] = {}
        self._locations: dict[int, LocationOps] = {}

    def _text(self, step: Step) -> str | None:
        if step.text is None:
            return None
        try:
            return read_text(self.root, step.text)
        except ReadError:
            return None

    def ops(self, step: Step) -> dict[str, int]:
        if step.index not in self._ops:
            text = self._text(step)
            self._ops[step.index] = ir_stats(text, step.ir).ops if text is not None else {}
        return self._ops[step.index]

    def location_ops(self, step: Step) -> LocationOps:
        if step.index not in self._locations:
            text = self._text(step)
            ops: LocationOps = {}
            if text is not None:
                try:
                    ops = hlo_location_ops(text) if step.ir == "hlo" else mlir_location_ops(text)
                except ReadError:  # HLO text the parser rejects: no locations known
                    ops = {}
            self._locations[step.index] = ops
        return self._locations[step.index]

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


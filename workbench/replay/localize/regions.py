"""Modules cut out of a step for the truth of one value: its cone (what it depends on),
the step without its settled instructions, and a value's region back to values both steps
made alike.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import replace

from workbench.hlo_ir import Computation, HloModule, Instruction
from workbench.replay.localize.match import (
    CALLS,
    Key,
    Site,
)
from workbench.replay.localize.result import DynKey


def entry_name(key: DynKey) -> str:
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
    `StepPair.settled`) that no other instruction kept reads; those read (and the root)
    become placeholders: constants of their shape with no value, whose values the observer
    gives (`Search.known`). Parameters stay, so it takes the same arguments."""
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

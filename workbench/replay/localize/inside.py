"""Where inside the computations it calls a culprit instruction changed, and whose metadata
speaks for a culprit that has none.

Localization judges values, and the scalars a reducer, a comparator or a scatter's combiner
makes are not values it sees: a bug planted in the reducer of a `reduce-window` is named at
the `reduce-window`. The change itself is found here by walking the called computations of
the culprit and of its counterpart side by side from their roots (operands first), down into
the computations they call in turn: the first instruction whose opcode, shape or attributes
differ, or whose operands do not line up.

An instruction a pass made (the reduce-window of the tree-reduction rewriter) often carries no
metadata; its op_name and source line are borrowed, and said to be, from the nearest
instruction that has them: its counterpart before the pass, the changed instruction inside it,
the instructions reading it, then its operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from workbench.hlo_ir import Computation, HloModule, Instruction
from workbench.replay.localize.match import DETAILS, literal_key

_details = attrgetter(*DETAILS)


@dataclass(frozen=True)
class InnerChange:
    """The first instruction that changed inside a called computation of the culprit."""

    role: str  # what the computation is to the culprit: "reducer", "comparator", "body", ...
    computation: str  # the later step's computation holding the changed instruction
    instruction: Instruction  # the later step's instruction
    was: Instruction  # its counterpart before the pass

    @property
    def text(self) -> str:
        """`reduce_sum.5 (subtract, was add) in region_1.3, its reducer`."""
        opcode = self.instruction.opcode
        change = (f"{opcode}, was {self.was.opcode}" if opcode != self.was.opcode
                  else f"{opcode}, its attributes or shape changed")
        return f"{self.instruction.name} ({change}) in {self.computation}, its {self.role}"


def role(caller: Instruction, callee: Computation) -> str:
    """What `callee` is to the instruction calling it."""
    opcode = caller.opcode
    if opcode == "while":
        return "loop condition" if callee.root.shape.element_type == "pred" else "loop body"
    if opcode == "sort":
        return "comparator"
    if opcode in ("scatter", "select-and-scatter"):
        index = caller.called_computations.index(callee.name)
        return "select computation" if opcode == "select-and-scatter" and index == 0 else (
            "combiner")
    if opcode == "fusion":
        return "fused computation"
    if opcode == "conditional":
        return "branch"
    if opcode in ("reduce", "reduce-window", "all-reduce", "reduce-scatter"):
        return "reducer"
    return "called computation"


def _alike(a: Instruction, b: Instruction) -> bool:
    return (a.opcode == b.opcode and str(a.shape) == str(b.shape)
            and len(a.operands) == len(b.operands)
            and _details(a) == _details(b) and literal_key(a) == literal_key(b)
            and a.parameter_number == b.parameter_number)


def change_inside(after: HloModule, mine: Instruction, before: HloModule,
                  theirs: Instruction) -> InnerChange | None:
    """The first instruction that differs inside the computations `mine` (of `after`) calls
    from those its counterpart `theirs` (of `before`) calls; None when they compute alike
    (or call different numbers of computations: then the culprit itself says it)."""
    if len(mine.called_computations) != len(theirs.called_computations):
        return None
    later, earlier = after.by_name, before.by_name
    seen: set[tuple[str, str]] = set()

    def inside(caller: Instruction, name_a: str, name_b: str) -> InnerChange | None:
        a, b = later.get(name_a), earlier.get(name_b)
        if a is None or b is None or (name_a, name_b) in seen:
            return None
        seen.add((name_a, name_b))
        found = walk(a, b, a.root_name, b.root_name, set())
        if isinstance(found, InnerChange):
            return found
        if found is not None:
            return InnerChange(role(caller, a), a.name, found[0], found[1])
        return None

    def walk(a: Computation, b: Computation, name_a: str, name_b: str,
             done: set[tuple[str, str]]) -> tuple[Instruction, Instruction] | InnerChange | None:
        if (name_a, name_b) in done:
            return None
        done.add((name_a, name_b))
        x, y = a.by_name[name_a], b.by_name[name_b]
        if len(x.operands) == len(y.operands):
            for operand_a, operand_b in zip(x.operands, y.operands, strict=True):
                found = walk(a, b, operand_a, operand_b, done)
                if found is not None:
                    return found
        if not _alike(x, y) or len(x.called_computations) != len(y.called_computations):
            return (x, y)
        for called_a, called_b in zip(x.called_computations, y.called_computations,
                                      strict=True):
            deeper = inside(x, called_a, called_b)
            if deeper is not None:
                return deeper
        return None

    for called_a, called_b in zip(mine.called_computations, theirs.called_computations,
                                  strict=True):
        found = inside(mine, called_a, called_b)
        if found is not None:
            return found
    return None


def metadata_source(module: HloModule, computation: Computation, instruction: Instruction,
                    others: list[tuple[str, HloModule, Instruction]]) -> tuple[
                        str, HloModule, Instruction] | None:
    """Where the culprit's op_name and source come from when it has none: the first of
    `others` (its counterpart, the changed instruction inside it, each with its module and
    what it is to the culprit), then the instructions of `computation` reading it, then its
    operands, that has an op_name. None when the culprit has its own, or nothing near does."""
    if instruction.metadata is not None and instruction.metadata.op_name:
        return None
    readers = [i for i in computation.instructions if instruction.name in i.operands]
    by_name = computation.by_name
    near = [*others, *((f"{i.name}, which reads it", module, i) for i in readers),
            *((f"{by_name[o].name}, its operand", module, by_name[o])
              for o in instruction.operands if o in by_name)]
    for found in near:
        metadata = found[2].metadata
        if metadata is not None and metadata.op_name:
            return found
    return None

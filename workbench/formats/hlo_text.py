"""Parse an HLO text module (`*.txt` dumps, `before_optimizations`, per-pass steps) into the
HLO IR model of `workbench.hlo_ir`.

A hand-written recursive-descent scanner over the whole text: compiled patterns are matched
at the current position for names, shapes and numbers, and attribute values are cut out by
their balanced brackets before being interpreted. The common instruction line (plain operand
names, no comment) is read in one match from its indentation to the end of its operands, and
operands are checked against the names defined above them as they come, so a 6,000-line
module parses in about a tenth of a second (`benchmarks/hlo_parse_bench.py`; its attributes
take most of that) and a 1,000,000-instruction one in a few seconds
(`benchmarks/hostile_bench.py`).

It accepts what XLA prints and what its own parser reads back: `%` on names or not, typed
operands of older dumps (`add(f32[2] %x, f32[2] %y)`), `/*index=5*/` comments, layouts with
tiling and memory-space extras, bounded (`<=8`) and unbounded (`?`) dynamic dimensions, and
the source-location tables. Attributes the model does not type are kept verbatim in
`Instruction.attrs`; they are never an error.

Errors are `HloParseError` with the file, 1-based line and column, and what was expected.

Three pieces, each a layer of the one below: `hlo_text_scan.py` (the cursor: tokens, bracket
groups, shapes), `hlo_text_instruction.py` (one instruction line and its attributes) and
this module (the module header, the source tables, computations and the common line read
in one match).
"""

from __future__ import annotations

import re

from workbench.formats import hlo_text_attrs as attrs
from workbench.formats.hlo_text_attrs import AttributeTextError
from workbench.formats.hlo_text_instruction import InstructionReader, Pending
from workbench.formats.hlo_text_scan import INT, NAME_BODY, HloParseError
from workbench.gc_pause import gc_paused
from workbench.hlo_ir import (
    Computation,
    FileLocation,
    HloModule,
    Instruction,
    SourceTables,
    StackFrame,
)

__all__ = ["TUPLE_ELEMENT", "HloParseError", "parse_hlo_text"]

_MODULE_NAME = re.compile(r"[^\s,]+")
_ATTR_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_HEAD = re.compile(
    r"(ROOT[ \t]+)?%?(" + NAME_BODY + r")[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?)[ \t]+([a-z][a-z0-9\-]*)\("
)
# The common instruction line in one match, from the whitespace before it to the `)` after
# plain operands: `[ROOT] %name = f32[2]{0} opcode(%a, %b)`. Groups: 1 the instruction (its
# start), 2 ROOT, 3 name, 4 shape, 5 opcode, 6 operands, 7 the closing `)` (None when the
# operands are not plain names: typed operands, a constant's literal, a parameter's number),
# 8 the space after it when no attribute follows (the next token is neither `,` nor a comment).
_LINE = re.compile(
    r"\s*((ROOT[ \t]+)?%?(" + NAME_BODY + r")[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?)[ \t]+([a-z][a-z0-9\-]*)\()"
    r"(?:[ \t]*(%?" + NAME_BODY + r"(?:[ \t]*,[ \t]*%?" + NAME_BODY + r")*)?[ \t]*(\))"
    r"(\s*(?=[^\s,/]))?)?"
)
_LITERAL_OPERANDS = frozenset(("constant", "parameter"))  # not operand names in parentheses
_BUILT = frozenset(("dot", "gather", "scatter"))  # typed fields made even without attributes
# Newer XLA prints a get-tuple-element as its use, `%sort.11#0` (element 0 of `%sort.11`;
# `#0#1` goes one level deeper), and not as an instruction of its own. The reader makes that
# get-tuple-element, named as written, just before its first user.
TUPLE_ELEMENT = "#"
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_hlo_text(text: str, file: str = "") -> HloModule:
    """Parse one HLO module printed by XLA. Raises HloParseError naming file, line and column.

    The model built forms no cycles, so the cyclic collector is paused meanwhile: left on, it
    passes over every instruction made so far again and again (two thirds of the time of a
    1,000,000-instruction module)."""
    with gc_paused():
        return _Parser(text, file).module()


def _fix_parent_frame_ids(tables: SourceTables) -> None:
    """XLA prints each StackFrames row's parent id one too high: the first frame, which has no
    parent, shows `parent_frame_id=1` (itself), where the module's proto says 0 (none) and
    every other row likewise differs by one. A frame cannot be its own parent, so a table
    with such a row is shifted back; a table printed with true ids is left alone."""
    frames = tables.stack_frames
    if any(frame.parent_frame_id == row for row, frame in frames.items()):
        tables.stack_frames = {
            row: StackFrame(frame.file_location_id, max(frame.parent_frame_id - 1, 0))
            for row, frame in frames.items()
        }


class _Parser(InstructionReader):
    """A whole module: its header, source tables and computations (the instructions,
    `hlo_text_instruction.py`; the tokens and shapes, `hlo_text_scan.py`)."""

    # ---- module ----

    def module(self) -> HloModule:
        if not self.keyword("HloModule"):
            raise self.error("expected 'HloModule' at the start of the module")
        self.skip()
        match = _MODULE_NAME.match(self.text, self.pos)
        if match is None:
            raise self.error("expected the module name")
        name = match.group()
        self.pos = match.end()
        header: dict[str, str] = {}
        while True:
            self.pos = self.line_end()
            if not self.text.startswith(",", self.pos):
                break
            self.pos += 1
            self.pos = self.line_end()
            key = _ATTR_NAME.match(self.text, self.pos)
            if key is None:
                raise self.error("expected a module attribute name")
            self.pos = key.end()
            self.expect("=")
            value, _ = self.raw_value()
            header[key.group()] = value
        layout = header.pop("entry_computation_layout", None)
        if layout is not None and layout.startswith("{") and layout.endswith("}"):
            layout = _COMMENT.sub("", layout[1:-1])  # drop `/*index=5*/` annotations
        tables = SourceTables()
        computations: list[Computation] = []
        while True:
            self.skip()
            if self.pos >= len(self.text):
                break
            table = next((t for t in _TABLES if self.keyword(t)), None)
            if table is not None:
                self.table(table, tables)
            else:
                computations.append(self.computation())
        if not computations:
            raise self.error("module has no computations")
        _fix_parent_frame_ids(tables)
        by_name: dict[str, Computation] = {}
        for computation in computations:
            if computation.name in by_name:
                raise self.error(f"computation {computation.name!r} is defined twice", 0)
            by_name[computation.name] = computation
        for reference, pos in self.references:
            if reference not in by_name:
                raise self.error(f"unknown computation {reference!r}", pos)
        entries = [c for c in computations if c.is_entry]
        if len(entries) > 1:
            raise self.error("more than one ENTRY computation", 0)
        if not entries:  # XLA's rule: without ENTRY, the last computation is the entry
            computations[-1].is_entry = True
            entries = [computations[-1]]
        return HloModule(name=name, computations=computations, entry_name=entries[0].name,
                         entry_computation_layout=layout, attributes=header, source=tables)

    def table(self, table: str, tables: SourceTables) -> None:
        """Rows `<id> <value>` until the next line that does not start with a number."""
        while True:
            self.skip()
            match = INT.match(self.text, self.pos)
            if match is None:
                return
            row = int(match.group())
            self.pos = match.end()
            self.skip()
            value, start = self.raw_value()
            try:
                if table == "FileNames":
                    tables.file_names[row] = attrs.unquote(value)
                elif table == "FunctionNames":
                    tables.function_names[row] = attrs.unquote(value)
                else:
                    kind = FileLocation if table == "FileLocations" else StackFrame
                    known = kind.__dataclass_fields__
                    numbers = {k: int(v) for k, v, _ in
                               attrs.key_values(attrs.braced_inner(value), 1) if k in known}
                    if table == "FileLocations":
                        tables.file_locations[row] = FileLocation(**numbers)
                    else:
                        tables.stack_frames[row] = StackFrame(**numbers)
            except AttributeTextError as error:
                raise self.error(f"{table} row {row}: {error.message}",
                                 start + error.offset) from None
            except (TypeError, ValueError) as error:
                raise self.error(f"{table} row {row}: {error}", start) from None

    # ---- computations ----

    def computation(self) -> Computation:
        is_entry = self.keyword("ENTRY")
        start = self.pos
        name = self.name("a computation name (or one of FileNames, FunctionNames, ...)")
        self.skip()
        if self.text.startswith("(", self.pos):  # signature: (p: f32[2], ...) -> f32[2]
            self.pos = self.closing(self.pos, "(")
            self.expect("->")
            self.shape()
        self.expect("{")
        instructions: list[Instruction] = []
        # Every name defined so far, to itself: operands share their definition's string
        # (a million-instruction module holds each name once, not once per use).
        defined: dict[str, str] = {}
        root: str | None = None
        # Operands not defined above their user, reported once the computation is read (as
        # defined later, or nowhere); `refs` holds one general-form instruction's operands.
        undefined: list[tuple[str, int]] = []
        refs: list[tuple[str, int]] = []
        text = self.text
        shapes = self.shapes
        while True:
            line = _LINE.match(text, self.pos)
            if line is not None and line[7] is not None and line[5] not in _LITERAL_OPERANDS:
                _, is_root, label, shape_text, opcode, operand_text, _, plain_end = line.groups()
                # the common line, `[ROOT] %name = f32[2]{0} opcode(%a, %b)`, read in one match
                instruction_start = line.start(1)
                shape = shapes.get(shape_text)
                if shape is None:
                    shape = shapes[shape_text] = self.array_shape(line.start(4), line.end(4))
                operands = (operand_text.replace("%", "").replace(" ", "").replace("\t", "")
                            .split(",") if operand_text else [])
                for number, operand in enumerate(operands):
                    known = defined.get(operand)
                    if known is None:
                        undefined.append((operand, line.end(1)))
                    else:
                        operands[number] = known
                self.pos = line.end()
                if plain_end is not None and opcode not in _BUILT:
                    instruction = Instruction(label, opcode, shape, operands)
                else:
                    instruction = self.attributes(label, shape, opcode, operands, Pending())
            else:
                if line is not None:
                    instruction_start = self.pos = line.start(1)
                else:
                    self.skip()
                    instruction_start = self.pos
                    char = text[instruction_start : instruction_start + 1]
                    if char == "}":
                        break
                    if not char:
                        raise self.error(f"computation {name!r} is not closed with '}}'", start)
                head = _HEAD.match(text, instruction_start)
                if head is not None:  # `[ROOT] %name = f32[2]{0} opcode(` and other operands
                    is_root = head.group(1)
                    shape_text = head.group(3)
                    shape = shapes.get(shape_text)
                    if shape is None:
                        shape = shapes[shape_text] = self.array_shape(head.start(3),
                                                                      head.end(3))
                    self.pos = head.end() - 1
                    instruction = self.instruction_body(head.group(2), shape, head.group(4),
                                                        refs)
                else:
                    is_root = self.keyword("ROOT")
                    instruction = self.instruction(refs)
                for ref in refs:
                    if ref[0] in defined:
                        continue
                    if TUPLE_ELEMENT in ref[0] and self.tuple_elements(
                            ref, instructions, defined, name):
                        continue
                    undefined.append(ref)
                refs.clear()
            if instruction.name in defined:
                raise self.error(f"instruction {instruction.name!r} is defined twice",
                                 instruction_start)
            defined[instruction.name] = instruction.name
            instructions.append(instruction)
            if is_root:
                if root is not None:
                    raise self.error("more than one ROOT instruction", instruction_start)
                root = instruction.name
        self.pos += 1
        while True:  # trailing computation attributes, e.g. `, execution_thread="host"`
            self.pos = self.line_end()
            if not self.text.startswith(",", self.pos):
                break
            self.pos += 1
            self.skip()
            self.name("a computation attribute")
            self.expect("=")
            self.raw_value()
        if not instructions:
            raise self.error(f"computation {name!r} has no instructions", start)
        if undefined:
            operand, pos = undefined[0]
            if operand not in defined:
                raise self.error(f"unknown operand %{operand} in computation {name!r}",
                                 self.operand_position(operand, pos))
            # XLA prints operands before their users and its parser requires it (as the
            # proto reader does); a use before the definition would evaluate nothing.
            raise self.error(f"operand %{operand} is used before its definition in "
                             f"computation {name!r}", self.operand_position(operand, pos))
        return Computation(name=name, instructions=instructions,
                           root_name=root or instructions[-1].name, is_entry=is_entry)

    def tuple_elements(self, ref: tuple[str, int], instructions: list[Instruction],
                       defined: dict[str, str], computation: str) -> bool:
        """Define the get-tuple-elements an operand `%x#N[#M...]` stands for, each after the
        instructions read so far; False when `%x` is not defined above (reported as such)."""
        written, pos = ref
        base, *indices = written.split(TUPLE_ELEMENT)
        if base not in defined:
            return False
        tuple_name = base
        shape = next(i.shape for i in reversed(instructions) if i.name == base)
        for index_text in indices:
            index = int(index_text)
            if not shape.is_tuple or index >= len(shape.tuple_shapes):
                raise self.error(f"%{written}: %{tuple_name} has no tuple element {index} "
                                 f"(its shape is {shape}) in computation {computation!r}",
                                 self.operand_position(written, pos))
            shape = shape.tuple_shapes[index]
            name = f"{tuple_name}{TUPLE_ELEMENT}{index}"
            if name not in defined:
                instructions.append(Instruction(name, "get-tuple-element", shape, [tuple_name],
                                                tuple_index=index))
                defined[name] = name
            tuple_name = name
        return True

    def operand_position(self, operand: str, pos: int) -> int:
        """Where `operand` is written in the operand list starting at `pos`."""
        match = re.compile(r"%?" + re.escape(operand) + r"(?![\w.\-$])").search(self.text, pos)
        return match.start() if match else pos

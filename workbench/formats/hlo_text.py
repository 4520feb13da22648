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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from workbench.formats import hlo_text_attrs as attrs
from workbench.formats.hlo_text_attrs import AttributeTextError
from workbench.formats.hlo_text_literal import LiteralTextError, is_elided, parse_literal_text
from workbench.gc_pause import gc_paused
from workbench.hlo_ir import (
    ARRAY_TYPES,
    Computation,
    DotDimensionNumbers,
    FileLocation,
    GatherDimensionNumbers,
    HloModule,
    Instruction,
    ScatterDimensionNumbers,
    Shape,
    SourceTables,
    StackFrame,
)
from workbench.sources import ReadError


class HloParseError(ReadError):
    """HLO text that cannot be parsed; `line` and `column` are 1-based."""

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        super().__init__(file or "<text>", f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column
        self.message = message


_SPACE = re.compile(r"(?:\s+|/\*.*?\*/|//[^\n]*)*", re.S)
# A name: `%` then any of [\w.-$] (`%0` is fine), or without `%`, not starting with a digit.
_NAME_BODY = r"(?:(?<=%)[\w.\-$]+|[A-Za-z_$][\w.\-$]*)"
_NAME = re.compile(r"%?(" + _NAME_BODY + ")")
_MODULE_NAME = re.compile(r"[^\s,]+")
_OPCODE = re.compile(r"[a-z][a-z0-9\-]*")
_INT = re.compile(r"-?\d+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_ATTR_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_SIMPLE_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?")
_SHAPE_HEAD = re.compile(r"([a-z][a-z0-9]*)\[([^\]\[]*)\]")
_VALUE_STOP = re.compile(r'[{}()\[\]"\s,]')
_BRACE_STOP = re.compile(r'[{}"]')
_PAREN_STOP = re.compile(r'[()"]')
_LINE_END = re.compile(r"[ \t]*")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_HEAD = re.compile(
    r"(ROOT[ \t]+)?%?(" + _NAME_BODY + r")[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?)[ \t]+([a-z][a-z0-9\-]*)\("
)
# The common instruction line in one match, from the whitespace before it to the `)` after
# plain operands: `[ROOT] %name = f32[2]{0} opcode(%a, %b)`. Groups: 1 the instruction (its
# start), 2 ROOT, 3 name, 4 shape, 5 opcode, 6 operands, 7 the closing `)` (None when the
# operands are not plain names: typed operands, a constant's literal, a parameter's number),
# 8 the space after it when no attribute follows (the next token is neither `,` nor a comment).
_LINE = re.compile(
    r"\s*((ROOT[ \t]+)?%?(" + _NAME_BODY + r")[ \t]*=[ \t]*"
    r"([a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?)[ \t]+([a-z][a-z0-9\-]*)\()"
    r"(?:[ \t]*(%?" + _NAME_BODY + r"(?:[ \t]*,[ \t]*%?" + _NAME_BODY + r")*)?[ \t]*(\))"
    r"(\s*(?=[^\s,/]))?)?"
)
_LITERAL_OPERANDS = frozenset(("constant", "parameter"))  # not operand names in parentheses
_BUILT = frozenset(("dot", "gather", "scatter"))  # typed fields made even without attributes
_SIMPLE_OPERANDS = re.compile(
    r"[ \t]*((?:%?" + _NAME_BODY + r"[ \t]*,[ \t]*)*%?" + _NAME_BODY + r")?[ \t]*\)"
)
_ATTR_HEAD = re.compile(r"[ \t]*,[ \t]*([A-Za-z_][\w.\-]*)=")
_ATTR_NAME_EQUALS = re.compile(r"([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*")
_BARE = re.compile(r'[^\s,{}()\[\]"]+')
_FLAT_GROUP = re.compile(r'\{[^{}"]*(?:"(?:[^"\\]|\\.)*"[^{}"]*)*\}')  # `{...}`, no nesting
# Newer XLA prints a get-tuple-element as its use, `%sort.11#0` (element 0 of `%sort.11`;
# `#0#1` goes one level deeper), and not as an instruction of its own. The reader makes that
# get-tuple-element, named as written, just before its first user.
TUPLE_ELEMENT = "#"
_ELEMENT_SUFFIX = re.compile(r"(?:#\d+)+")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_NON_ARRAY_TYPES = ("token", "opaque")

# Where each computation-reference attribute goes in `Instruction.called_computations`.
_CALLED_ATTRS = frozenset((
    "to_apply", "calls", "condition", "body", "branch_computations", "true_computation",
    "false_computation", "select", "scatter", "called_computations",
))
_GATHER_KEYS = frozenset((
    "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
    "start_indices_batching_dims",
))
_SCATTER_KEYS = frozenset((
    "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
    "input_batching_dims", "scatter_indices_batching_dims",
))
_DOT_KEYS = frozenset(("lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
                       "rhs_batch_dims"))


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


@dataclass
class _Pending:
    """An instruction's attributes while its line is read: typed fields and loose parts."""

    fields: dict[str, Any] = field(default_factory=dict)
    called: dict[str, list[str]] = field(default_factory=dict)
    called_at: int = 0
    dot: dict[str, tuple[int, ...]] = field(default_factory=dict)
    gather: dict[str, Any] = field(default_factory=dict)
    scatter: dict[str, Any] = field(default_factory=dict)
    loose: dict[str, str] = field(default_factory=dict)


class _Parser:
    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.pos = 0
        self.shapes: dict[str, Shape] = {}
        # (computation name, position) of every reference, checked once all are known
        self.references: list[tuple[str, int]] = []

    # ---- errors and low-level scanning ----

    def error(self, message: str, pos: int | None = None) -> HloParseError:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return HloParseError(self.file, line, column, message)

    def skip(self) -> None:
        space = _SPACE.match(self.text, self.pos)
        assert space is not None  # the pattern matches the empty string
        self.pos = space.end()

    def line_end(self) -> int:
        """Where the spaces and tabs from here end."""
        spaces = _LINE_END.match(self.text, self.pos)
        assert spaces is not None  # the pattern matches the empty string
        return spaces.end()

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def expect(self, token: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.pos):
            found = self.text[self.pos : self.pos + 20].split("\n")[0] or "end of text"
            raise self.error(f"expected {token!r}, found {found!r}")
        self.pos += len(token)

    def name(self, what: str) -> str:
        self.skip()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.error(f"expected {what}")
        self.pos = match.end()
        return match[1]

    def keyword(self, word: str) -> bool:
        """Consume `word` if it is the next token (followed by a space or end of line)."""
        self.skip()
        end = self.pos + len(word)
        if self.text.startswith(word, self.pos) and (
            end == len(self.text) or self.text[end] in " \t\r\n"
        ):
            self.pos = end
            return True
        return False

    def closing(self, pos: int, opener: str) -> int:
        """Position just after the bracket group that opens at `pos`, strings skipped."""
        text = self.text
        stop = _BRACE_STOP if opener == "{" else _PAREN_STOP
        closer = "}" if opener == "{" else ")"
        depth = 0
        index = pos
        while True:
            match = stop.search(text, index)
            if match is None:
                raise self.error(f"unbalanced {opener!r}", pos)
            char = match.group()
            if char == '"':
                string = _STRING.match(text, match.start())
                if string is None:
                    raise self.error("unterminated string", match.start())
                index = string.end()
                continue
            index = match.end()
            if char == opener:
                depth += 1
            elif char == closer:
                depth -= 1
                if depth == 0:
                    return index

    def raw_value(self) -> tuple[str, int]:
        """An attribute value as printed: a string, a bracket group or a bare word."""
        text = self.text
        start = self.pos
        char = text[start : start + 1]
        if char == "{":
            end = self.closing(start, "{")
        elif char == '"':
            match = _STRING.match(text, start)
            if match is None:
                raise self.error("unterminated string")
            end = match.end()
        else:
            depth = 0
            end = start
            while True:
                match = _VALUE_STOP.search(text, end)
                if match is None:
                    end = len(text)
                    break
                char = match.group()
                end = match.start()
                if char == '"':
                    string = _STRING.match(text, end)
                    if string is None:
                        raise self.error("unterminated string", end)
                    end = string.end()
                    continue
                if char in "{([":
                    depth += 1
                elif char in "})]":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0:
                    break
                end += 1
            if depth:
                raise self.error("unbalanced brackets in attribute value", start)
        self.pos = end
        return text[start:end], start

    # ---- shapes ----

    def shape(self) -> Shape:
        self.skip()
        text = self.text
        if text.startswith("(", self.pos):
            self.pos += 1
            elements: list[Shape] = []
            if self.peek() == ")":
                self.pos += 1
                return Shape("tuple")
            while True:
                elements.append(self.shape())
                self.skip()
                if text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                self.expect(")")
                return Shape("tuple", tuple_shapes=tuple(elements))
        match = _SIMPLE_SHAPE.match(text, self.pos)
        if match is not None and not text.startswith("{", match.end()):
            key = match.group()
            shape = self.shapes.get(key)
            if shape is None:
                shape = self.shapes[key] = self.array_shape(self.pos, match.end())
            self.pos = match.end()
            return shape
        head = _SHAPE_HEAD.match(text, self.pos)
        if head is None:
            raise self.error("expected a shape such as f32[2,3]{1,0}")
        end = self.closing(head.end(), "{") if text.startswith("{", head.end()) else head.end()
        shape = self.array_shape(self.pos, end)
        self.pos = end
        return shape

    def array_shape(self, start: int, end: int) -> Shape:
        head = _SHAPE_HEAD.match(self.text, start)
        assert head is not None
        element_type = head[1]
        if element_type not in ARRAY_TYPES:
            if element_type in _NON_ARRAY_TYPES and not head[2].strip():
                return Shape(element_type)
            raise self.error(f"unknown element type {element_type!r}", start)
        dims: list[int] = []
        dynamic: list[bool] = []
        if head[2].strip():
            offset = head.start(2)
            for part in head[2].split(","):
                item = part.strip()
                is_dynamic = item.startswith("<=") or item == "?"
                number = item[2:] if item.startswith("<=") else item
                if item == "?":
                    dims.append(-1)
                elif number.isascii() and number.isdigit():
                    dims.append(int(number))
                else:
                    raise self.error(f"bad dimension {item!r}", offset)
                dynamic.append(is_dynamic)
                offset += len(part) + 1
        layout: tuple[int, ...] | None = None
        extra = ""
        if head.end() < end:  # `{minor_to_major[:extras]}`
            inner = self.text[head.end() + 1 : end - 1]
            order, _, extra = inner.partition(":")
            try:
                layout = tuple(int(d) for d in order.split(",")) if order.strip() else ()
            except ValueError:
                raise self.error(f"bad layout {{{inner}}}", head.end()) from None
            if len(layout) != len(dims) and order.strip():
                raise self.error(f"layout {{{inner}}} does not match rank {len(dims)}",
                                 head.end())
        return Shape(element_type, tuple(dims), tuple(dynamic) if any(dynamic) else (),
                     layout, (), extra)

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
            match = _INT.match(self.text, self.pos)
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
                    instruction = self.attributes(label, shape, opcode, operands, _Pending())
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

    # ---- instructions ----

    def instruction(self, operand_refs: list[tuple[str, int]]) -> Instruction:
        """The general form: comments or line breaks anywhere, tuple shapes, typed operands."""
        name = self.name("an instruction name")
        self.expect("=")
        shape = self.shape()
        self.skip()
        match = _OPCODE.match(self.text, self.pos)
        if match is None:
            raise self.error("expected an opcode")
        self.pos = match.end()
        if not self.text.startswith("(", self.pos):
            raise self.error(f"expected '(' after opcode {match.group()}")
        return self.instruction_body(name, shape, match.group(), operand_refs)

    def instruction_body(self, name: str, shape: Shape, opcode: str,
                         operand_refs: list[tuple[str, int]]) -> Instruction:
        """Operands (from the opening parenthesis on) and attributes."""
        text = self.text
        pending = _Pending()
        operands: list[str] = []
        if opcode == "constant":
            self.constant(shape, pending)
        elif opcode == "parameter":
            self.pos += 1
            self.skip()
            number = _INT.match(text, self.pos)
            if number is None:
                raise self.error("expected the parameter number")
            pending.fields["parameter_number"] = int(number.group())
            self.pos = number.end()
            self.expect(")")
        else:
            simple = _SIMPLE_OPERANDS.match(text, self.pos + 1)
            if simple is not None:
                if simple.group(1):
                    for operand in simple.group(1).split(","):
                        operand = operand.strip()
                        operand = operand[1:] if operand.startswith("%") else operand
                        operands.append(operand)
                        operand_refs.append((operand, simple.start()))
                self.pos = simple.end()
            else:
                self.operand_list(operands, operand_refs)
        return self.attributes(name, shape, opcode, operands, pending)

    def attributes(self, name: str, shape: Shape, opcode: str, operands: list[str],
                   pending: _Pending) -> Instruction:
        """The attributes after the operands (`, key=value` each), then the instruction."""
        text = self.text
        while True:
            attribute = _ATTR_HEAD.match(text, self.pos)
            if attribute is None:
                self.skip()  # a line break or comment before the next `,` is allowed
                if not text.startswith(",", self.pos):
                    break
                self.pos += 1
                self.skip()
                attribute = _ATTR_NAME_EQUALS.match(text, self.pos)
                if attribute is None:
                    raise self.error("expected an attribute name=value")
            key = attribute.group(1)
            start = attribute.end()
            char = text[start : start + 1]
            bare = _BARE.match(text, start) if char not in '{"' else None
            if bare is not None and text[bare.end() : bare.end() + 1] not in "{([":
                end = bare.end()
            elif char == "{":
                flat = _FLAT_GROUP.match(text, start)
                end = flat.end() if flat is not None else self.closing(start, "{")
            else:
                self.pos = start
                end = start + len(self.raw_value()[0])
            if key == "replica_groups" and text.startswith(" {", end):  # mesh['a'=4] {'a'}
                end = self.closing(end + 1, "{")
            self.pos = end
            try:
                self.attribute(opcode, key, text[start:end], start, pending)
            except AttributeTextError as error:
                raise self.error(f"{key}: {error.message}", start + error.offset) from None
        return self.build(name, opcode, shape, operands, pending)

    def operand_list(self, operands: list[str], operand_refs: list[tuple[str, int]]) -> None:
        """Operands in their general form: `(f32[2]{0} %a, /*index=1*/%b)`."""
        self.pos += 1
        if self.peek() == ")":
            self.pos += 1
            return
        while True:
            self.skip()
            char = self.text[self.pos : self.pos + 1]
            if char == "(" or _SHAPE_HEAD.match(self.text, self.pos):
                self.shape()  # older dumps print each operand's shape first
                self.skip()
            pos = self.pos
            operand = self.name("an operand name")
            element = _ELEMENT_SUFFIX.match(self.text, self.pos)
            if element is not None:  # `%sort.11#0`: that element of a tuple (see TUPLE_ELEMENT)
                operand += element.group()
                self.pos = element.end()
            operands.append(operand)
            operand_refs.append((operand, pos))
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(")")
            return

    def constant(self, shape: Shape, pending: _Pending) -> None:
        start = self.pos + 1
        end = self.closing(self.pos, "(")
        literal_text = self.text[start : end - 1]
        self.pos = end
        if is_elided(literal_text):
            pending.fields["literal_elided"] = True
            return
        try:
            pending.fields["literal"] = parse_literal_text(literal_text, shape)
        except LiteralTextError as error:
            raise self.error(error.message, start + error.offset) from None

    def attribute(self, opcode: str, key: str, value: str, start: int,
                  pending: _Pending) -> None:
        fields = pending.fields
        if key in _CALLED_ATTRS:
            names = attrs.name_list(value)
            pending.called[key] = names
            pending.called_at = pending.called_at or start
            self.references.extend((n, start) for n in names)
        elif key == "metadata":
            fields["metadata"] = attrs.metadata_value(value)
        elif key == "dimensions":
            fields["dimensions"] = attrs.int_list(value)
        elif key == "iota_dimension":
            fields["dimensions"] = (attrs.int_value(value),)
        elif key == "index" and opcode == "get-tuple-element":
            fields["tuple_index"] = attrs.int_value(value)
        elif key == "slice":
            fields["slice"] = attrs.slice_value(value)
        elif key == "dynamic_slice_sizes":
            fields["dynamic_slice_sizes"] = attrs.int_list(value)
        elif key == "window":
            fields["window"] = attrs.window_value(value)
        elif key == "padding" and opcode == "pad":
            fields["padding_config"] = attrs.padding_value(value)
        elif key == "dim_labels":
            fields["convolution_dimension_numbers"] = attrs.dim_labels_value(value)
        elif key in _DOT_KEYS:
            pending.dot[key] = attrs.int_list(value)
        elif key in _GATHER_KEYS and opcode == "gather":
            pending.gather[key] = attrs.int_list(value)
        elif key in _SCATTER_KEYS and opcode == "scatter":
            pending.scatter[key] = attrs.int_list(value)
        elif key == "index_vector_dim" and opcode in ("gather", "scatter"):
            target = pending.gather if opcode == "gather" else pending.scatter
            target[key] = attrs.int_value(value)
        elif key == "slice_sizes" and opcode == "gather":
            fields["gather_slice_sizes"] = attrs.int_list(value)
        elif key in ("feature_group_count", "batch_group_count", "exponent_bits",
                     "mantissa_bits", "k"):
            fields[key] = attrs.int_value(value)
        elif key == "operand_precision":
            inner = attrs.braced_inner(value)
            fields["operand_precision"] = tuple(p.strip().lower() for p in inner.split(",")
                                                if p.strip())
        elif key == "direction" and opcode == "compare":
            fields["comparison_direction"] = value
        elif key == "type" and opcode == "compare":
            fields["comparison_type"] = value
        elif key == "order" and opcode == "compare":  # newer XLA: TOTAL or PARTIAL
            if value == "TOTAL":
                fields["comparison_type"] = "TOTALORDER"
            elif value != "PARTIAL":
                pending.loose[key] = value
        elif key == "kind" and opcode == "fusion":
            fields["fusion_kind"] = value
        elif key == "custom_call_target":
            fields["custom_call_target"] = attrs.unquote(value)
        elif key == "backend_config":
            config = attrs.unquote(value) if value.startswith('"') else value
            fields["backend_config"] = config or None
        elif key == "sharding":
            fields["sharding"] = value
        elif key in ("is_stable", "largest"):
            fields[key] = attrs.bool_value(value)
        elif key == "algorithm" and opcode == "rng-bit-generator":
            fields["rng_algorithm"] = value
        elif key == "distribution" and opcode == "rng":
            fields["distribution"] = value
        elif key == "fft_type":
            fields["fft_type"] = value
        elif key == "fft_length":
            fields["fft_length"] = attrs.int_list(value)
        else:
            pending.loose[key] = value

    def build(self, name: str, opcode: str, shape: Shape, operands: list[str],
              pending: _Pending) -> Instruction:
        fields = pending.fields
        if pending.dot or opcode == "dot":
            fields["dot_dimension_numbers"] = DotDimensionNumbers(
                lhs_contracting_dims=pending.dot.get("lhs_contracting_dims", ()),
                rhs_contracting_dims=pending.dot.get("rhs_contracting_dims", ()),
                lhs_batch_dims=pending.dot.get("lhs_batch_dims", ()),
                rhs_batch_dims=pending.dot.get("rhs_batch_dims", ()),
            )
        if opcode == "gather":
            fields["gather_dimension_numbers"] = GatherDimensionNumbers(**pending.gather)
        if opcode == "scatter":
            fields["scatter_dimension_numbers"] = ScatterDimensionNumbers(**pending.scatter)
        called = pending.called
        if called:
            if opcode == "while":
                order = ["body", "condition"]
            elif opcode == "conditional":
                order = ["branch_computations", "true_computation", "false_computation"]
            elif opcode == "select-and-scatter":
                order = ["select", "scatter"]
            else:
                order = list(called)
            missing = [key for key in called if key not in order]
            if opcode in ("while", "select-and-scatter") and len(called) != 2:
                expected = " and ".join(order)
                raise self.error(f"{opcode} needs {expected}", pending.called_at)
            fields["called_computations"] = [
                computation for key in order + missing for computation in called.get(key, [])
            ]
        return Instruction(name=name, opcode=opcode, shape=shape, operands=operands,
                           attrs=pending.loose, **fields)

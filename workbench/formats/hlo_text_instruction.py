"""One instruction line of the HLO text reader (`hlo_text.py`): its name, shape and opcode,
its operands (typed or plain, `%x#0` tuple elements), a constant's literal, and its
attributes: the typed ones (`Instruction` fields, dot, gather and scatter dimension numbers,
called computations) made from their text, the rest kept verbatim."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from workbench.formats import hlo_text_attrs as attrs
from workbench.formats.hlo_text_attrs import AttributeTextError
from workbench.formats.hlo_text_literal import LiteralTextError, is_elided, parse_literal_text
from workbench.formats.hlo_text_scan import INT, NAME_BODY, SHAPE_HEAD, TextScanner
from workbench.hlo_ir import (
    DotDimensionNumbers,
    GatherDimensionNumbers,
    Instruction,
    ScatterDimensionNumbers,
    Shape,
)

_OPCODE = re.compile(r"[a-z][a-z0-9\-]*")
_SIMPLE_OPERANDS = re.compile(
    r"[ \t]*((?:%?" + NAME_BODY + r"[ \t]*,[ \t]*)*%?" + NAME_BODY + r")?[ \t]*\)"
)
_ATTR_HEAD = re.compile(r"[ \t]*,[ \t]*([A-Za-z_][\w.\-]*)=")
_ATTR_NAME_EQUALS = re.compile(r"([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*")
_BARE = re.compile(r'[^\s,{}()\[\]"]+')
_FLAT_GROUP = re.compile(r'\{[^{}"]*(?:"(?:[^"\\]|\\.)*"[^{}"]*)*\}')  # `{...}`, no nesting
# `%sort.11#0`, `#0#1`: a tuple element written as its use (`hlo_text.TUPLE_ELEMENT`).
_ELEMENT_SUFFIX = re.compile(r"(?:#\d+)+")
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


@dataclass
class Pending:
    """An instruction's attributes while its line is read: typed fields and loose parts."""

    fields: dict[str, Any] = field(default_factory=dict)
    called: dict[str, list[str]] = field(default_factory=dict)
    called_at: int = 0
    dot: dict[str, tuple[int, ...]] = field(default_factory=dict)
    gather: dict[str, Any] = field(default_factory=dict)
    scatter: dict[str, Any] = field(default_factory=dict)
    loose: dict[str, str] = field(default_factory=dict)


class InstructionReader(TextScanner):
    """Reads instructions; the computations they call are noted in `references`, checked
    once the whole module is read."""

    def __init__(self, text: str, file: str) -> None:
        super().__init__(text, file)
        # (computation name, position) of every reference, checked once all are known
        self.references: list[tuple[str, int]] = []

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
        pending = Pending()
        operands: list[str] = []
        if opcode == "constant":
            self.constant(shape, pending)
        elif opcode == "parameter":
            self.pos += 1
            self.skip()
            number = INT.match(text, self.pos)
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
                   pending: Pending) -> Instruction:
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
            if char == "(" or SHAPE_HEAD.match(self.text, self.pos):
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

    def constant(self, shape: Shape, pending: Pending) -> None:
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
                  pending: Pending) -> None:
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
              pending: Pending) -> Instruction:
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

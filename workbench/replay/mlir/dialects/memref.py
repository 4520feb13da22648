"""xDSL's memref dialect, with the syntax MLIR prints where xDSL's differs or is missing.

- MLIR prints `memref.alloc() alignment = 64 : memref<4x8xf32>` (alignment as a keyword
  property); older MLIR, and xDSL, use `memref.alloc() {alignment = 64 : i64} : ...`. Both
  are accepted (`memref.alloca` too).
- `memref.cast`, `memref.copy`, `memref.rank`, `memref.memory_space_cast` and `memref.global`
  (`memref.global "private" constant @c : memref<2xf32> = dense<[1.0, 2.0]>`) have no custom
  syntax in xDSL.

The ops keep xDSL's definitions; only their parsers change.
"""

from __future__ import annotations

from typing import Self

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser


def _parse_allocation(parser: Parser) -> tuple[list, list, IntegerAttr | None, dict, object]:
    """`(%d0, ...)[%s0, ...] alignment = N {attrs} : type`, every part but the type optional."""
    dynamic = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    symbols = (
        parser.parse_optional_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        or []
    )
    alignment: IntegerAttr | None = None
    if parser.parse_optional_keyword("alignment") is not None:
        parser.parse_punctuation("=")
        alignment = IntegerAttr(parser.parse_integer(), i64)
    attributes = parser.parse_optional_attr_dict()
    if "alignment" in attributes:
        found = attributes.pop("alignment")
        if isinstance(found, IntegerAttr):
            alignment = found
    parser.parse_punctuation(":")
    result_type = parser.parse_type()
    index = IndexType()
    return (
        [parser.resolve_operand(operand, index) for operand in dynamic],
        [parser.resolve_operand(operand, index) for operand in symbols],
        alignment,
        attributes,
        result_type,
    )


class AllocOp(memref.AllocOp):
    """`memref.alloc`, in either printed form."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        dynamic, symbols, alignment, attributes, result_type = _parse_allocation(parser)
        op = cls(dynamic, symbols, result_type, alignment)
        op.attributes |= attributes
        return op


class AllocaOp(memref.AllocaOp):
    """`memref.alloca`, in either printed form."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        dynamic, symbols, alignment, attributes, result_type = _parse_allocation(parser)
        op = cls.build(
            operands=[dynamic, symbols],
            result_types=[result_type],
            properties={"alignment": alignment} if alignment is not None else {},
        )
        op.attributes |= attributes
        return op


def _parse_conversion(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
    """`%m attr-dict : <source type> to <result type>`."""
    operand = parser.parse_unresolved_operand()
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    source_type = parser.parse_type()
    parser.parse_keyword("to")
    result_type = parser.parse_type()
    op = cls.build(
        operands=[parser.resolve_operand(operand, source_type)], result_types=[result_type]
    )
    op.attributes |= attributes
    return op


class CastOp(memref.CastOp):
    """`memref.cast %m : <source type> to <result type>`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return _parse_conversion(cls, parser)


class MemorySpaceCastOp(memref.MemorySpaceCastOp):
    """`memref.memory_space_cast %m : <source type> to <result type>`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return _parse_conversion(cls, parser)


class CopyOp(memref.CopyOp):
    """`memref.copy %source, %target : <source type> to <target type>`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        target = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        target_type = parser.parse_type()
        op = cls.build(
            operands=[
                parser.resolve_operand(source, source_type),
                parser.resolve_operand(target, target_type),
            ]
        )
        op.attributes |= attributes
        return op


class RankOp(memref.RankOp):
    """`memref.rank %m : <type>`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        operand = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(
            operands=[parser.resolve_operand(operand, parser.parse_type())],
            result_types=[IndexType()],
        )
        op.attributes |= attributes
        return op


class GlobalOp(memref.GlobalOp):
    """`memref.global ["private"] [constant] @name : <type> [= dense<...> | uninitialized]`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        visibility = parser.parse_optional_str_literal() or "public"
        constant = UnitAttr() if parser.parse_optional_keyword("constant") else None
        name = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        memref_type = parser.parse_type()
        initial: Attribute = UnitAttr()
        if (
            parser.parse_optional_punctuation("=") is not None
            and parser.parse_optional_keyword("uninitialized") is None
        ):
            initial = _parse_initial_value(parser, memref_type)
        attributes = parser.parse_optional_attr_dict()
        properties: dict[str, Attribute] = {
            "sym_name": name,
            "sym_visibility": StringAttr(visibility),
            "type": memref_type,
            "initial_value": initial,
        }
        if constant is not None:
            properties["constant"] = constant
        if "alignment" in attributes:
            properties["alignment"] = attributes.pop("alignment")
        op = cls.build(properties=properties)
        op.attributes |= attributes
        return op


def _parse_initial_value(parser: Parser, memref_type: Attribute) -> Attribute:
    """`dense<...>` (typed by the global's type) or a typed attribute (`dense_resource`)."""
    if not isinstance(memref_type, MemRefType):
        parser.raise_error(f"memref.global of type {memref_type}")
    if parser.parse_optional_keyword("dense") is not None:
        tensor_type = TensorType(memref_type.get_element_type(), memref_type.get_shape())
        return parser.parse_dense_int_or_fp_elements_attr(tensor_type)
    return parser.parse_attribute()


_REPLACED = {
    op.name: op for op in (AllocOp, AllocaOp, CastOp, MemorySpaceCastOp, CopyOp, RankOp, GlobalOp)
}

MemRef = Dialect(
    "memref",
    [_REPLACED.get(op.name, op) for op in memref.MemRef.operations],
    list(memref.MemRef.attributes),
)

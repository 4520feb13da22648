"""xDSL's memref dialect, with the syntax MLIR prints where xDSL's differs or is missing.

- MLIR prints `memref.alloc() alignment = 64 : memref<4x8xf32>` (alignment as a keyword
  property); older MLIR, and xDSL, use `memref.alloc() {alignment = 64 : i64} : ...`. Both
  are accepted (`memref.alloca` too).
- `memref.cast %m : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>` has no custom
  syntax in xDSL.

The ops keep xDSL's definitions; only their parsers change.
"""

from __future__ import annotations

from typing import Self

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import Dialect
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


class CastOp(memref.CastOp):
    """`memref.cast %m : <source type> to <result type>`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
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


_REPLACED = {op.name: op for op in (AllocOp, AllocaOp, CastOp)}

MemRef = Dialect(
    "memref",
    [_REPLACED.get(op.name, op) for op in memref.MemRef.operations],
    list(memref.MemRef.attributes),
)

"""The two Shardy ops JAX puts in single-device StableHLO: `sdy.mesh` and
`sdy.sharding_constraint`.

Both only describe how values would be split across devices. On one device a sharding
constraint is the identity and a mesh declares nothing the program computes with, so the
replay keeps their operands and results and reads past their sharding attributes
(`<@mesh, [{}, {"x"}]>`), which it has no use for.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind


def _skip_angle_brackets(parser: Parser) -> None:
    """Read past `<...>`, nested brackets included."""
    parser.parse_punctuation("<")
    depth = 1
    while depth:
        kind = parser._current_token.kind
        if kind == MLIRTokenKind.EOF:
            parser.raise_error("unterminated '<' in a sharding attribute")
        if kind == MLIRTokenKind.LESS:
            depth += 1
        elif kind == MLIRTokenKind.GREATER:
            depth -= 1
        parser._consume_token()


@irdl_op_definition
class MeshOp(IRDLOperation):
    """`sdy.mesh @name = <axes> {attributes}`."""

    name = "sdy.mesh"
    sym_name = opt_prop_def(StringAttr)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        name = parser.parse_symbol_name()
        parser.parse_punctuation("=")
        _skip_angle_brackets(parser)
        attributes = parser.parse_optional_attr_dict()
        return cls.create(properties={"sym_name": name}, attributes=attributes)


@irdl_op_definition
class ShardingConstraintOp(IRDLOperation):
    """`%r = sdy.sharding_constraint %x <@mesh, [...]> : type`: the identity on one device."""

    name = "sdy.sharding_constraint"
    input = operand_def()
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operand = parser.parse_unresolved_operand()
        _skip_angle_brackets(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(operand, type_)],
            result_types=[type_],
            attributes=attributes,
        )


SDY = Dialect("sdy", [MeshOp, ShardingConstraintOp], [])

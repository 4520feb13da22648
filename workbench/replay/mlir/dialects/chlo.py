"""The CHLO ops JAX leaves in the StableHLO it exports (`chlo.square`, `chlo.erf_inv`, ...).

CHLO ("client HLO") ops are elementwise functions that XLA expands into StableHLO; JAX prints
them as `%1 = chlo.square %0 : tensor<4xf32> -> tensor<4xf32>`.
"""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.parser import Parser


class _UnaryOp(IRDLOperation):
    """`chlo.<op> %x : <operand type> -> <result type>`."""

    operand = operand_def()
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operand = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        result_type = operand_type
        if parser.parse_optional_punctuation("->") is not None:
            result_type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(operand, operand_type)],
            result_types=[result_type],
            attributes=attributes,
        )


@irdl_op_definition
class SquareOp(_UnaryOp):
    name = "chlo.square"


@irdl_op_definition
class ErfOp(_UnaryOp):
    name = "chlo.erf"


@irdl_op_definition
class ErfInvOp(_UnaryOp):
    name = "chlo.erf_inv"


@irdl_op_definition
class TanOp(_UnaryOp):
    name = "chlo.tan"


@irdl_op_definition
class SinhOp(_UnaryOp):
    name = "chlo.sinh"


@irdl_op_definition
class CoshOp(_UnaryOp):
    name = "chlo.cosh"


CHLO = Dialect("chlo", [SquareOp, ErfOp, ErfInvOp, TanOp, SinhOp, CoshOp], [])

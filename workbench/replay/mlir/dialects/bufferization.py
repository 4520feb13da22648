"""xDSL's bufferization dialect, with conversions between any memref layout and a tensor.

xDSL requires `bufferization.to_tensor`'s memref type to be the tensor type with an identity
layout; MLIR allows any layout (`memref<4xf32, strided<[?], offset: ?>> to tensor<4xf32>`), as
one-shot-bufferize prints at function boundaries. These definitions accept any ranked or
unranked memref and tensor pair, in the current form (`: memref<...> to tensor<...>`) and
the older one without `to`. `bufferization.to_memref` is the older name of `to_buffer`.
"""

from __future__ import annotations

from typing import Self

from xdsl.dialects import bufferization
from xdsl.dialects.builtin import (
    MemRefType,
    TensorType,
    UnitAttr,
    UnrankedMemRefType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, result_def
from xdsl.parser import Parser

_KEYWORDS = ("restrict", "writable", "read_only")


def _tensor_for(parser: Parser, memref_type: Attribute) -> Attribute:
    """The tensor type with a memref type's shape and element type."""
    if isinstance(memref_type, MemRefType):
        return TensorType(memref_type.get_element_type(), memref_type.get_shape())
    parser.raise_error(f"expected a ranked memref type, got {memref_type}")


def _parse_conversion(
    cls: type[IRDLOperation], parser: Parser, source_is_memref: bool
) -> IRDLOperation:
    operand = parser.parse_unresolved_operand()
    properties: dict[str, Attribute] = {}
    while (keyword := parser.parse_optional_keyword_in(_KEYWORDS)) is not None:
        properties[keyword] = UnitAttr()
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    first = parser.parse_type()
    if parser.parse_optional_keyword("to") is not None:
        source_type, result_type = first, parser.parse_type()
    elif source_is_memref:
        # Older MLIR: `to_tensor %m : memref<...>`, the tensor type follows from the memref.
        source_type, result_type = first, _tensor_for(parser, first)
    else:
        # Older MLIR: `to_memref %t : memref<...>`, the printed type is the result's.
        source_type, result_type = _tensor_for(parser, first), first
    value = parser.resolve_operand(operand, source_type)
    return cls.create(
        operands=[value], result_types=[result_type], properties=properties, attributes=attributes
    )


@irdl_op_definition
class ToTensorOp(IRDLOperation):
    name = "bufferization.to_tensor"
    memref = operand_def(MemRefType | UnrankedMemRefType)
    tensor = result_def(TensorType | UnrankedTensorType)
    restrict = opt_prop_def(UnitAttr)
    writable = opt_prop_def(UnitAttr)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return _parse_conversion(cls, parser, source_is_memref=True)


@irdl_op_definition
class ToBufferOp(IRDLOperation):
    name = "bufferization.to_buffer"
    tensor = operand_def(TensorType | UnrankedTensorType)
    memref = result_def(MemRefType | UnrankedMemRefType)
    read_only = opt_prop_def(UnitAttr)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return _parse_conversion(cls, parser, source_is_memref=False)


@irdl_op_definition
class ToMemrefOp(IRDLOperation):
    name = "bufferization.to_memref"
    tensor = operand_def(TensorType | UnrankedTensorType)
    memref = result_def(MemRefType | UnrankedMemRefType)
    read_only = opt_prop_def(UnitAttr)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        return _parse_conversion(cls, parser, source_is_memref=False)


_REPLACED = {ToTensorOp.name: ToTensorOp, ToBufferOp.name: ToBufferOp}

Bufferization = Dialect(
    "bufferization",
    [_REPLACED.get(op.name, op) for op in bufferization.Bufferization.operations] + [ToMemrefOp],
    list(bufferization.Bufferization.attributes),
)

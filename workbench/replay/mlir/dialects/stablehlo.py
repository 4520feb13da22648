"""The StableHLO ops the replay interprets, parsed in the syntax JAX and IREE print.

xDSL ships no StableHLO dialect, so the subset is defined here. Each op accepts both its
generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`) and the pretty form StableHLO's
printer writes (`stablehlo.add %a, %b : tensor<4xf32>`). The pretty forms store their
attributes under the same property names the generic form uses, with builtin attributes:
dimension lists as `array<i64: ...>`; enums (`LT`, `SIGNED`) as strings; dot dimension
numbers as a dictionary of `array<i64>`. Attributes that only appear in generic form
(`#stablehlo.gather<...>`) stay unregistered attributes, read by `stablehlo_attrs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import IsTerminator

# --------------------------------------------------------------------------- parsing helpers


def _dims(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _operands(parser: Parser) -> tuple[list[UnresolvedOperand], bool]:
    """`%a, %b, ...`; also says whether a `,` followed the last operand (then a keyword
    such as `dims = [...]` comes next)."""
    operands = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(",") is not None:
        operand = parser.parse_optional_unresolved_operand()
        if operand is None:
            return operands, True
        operands.append(operand)
    return operands, False


def _keyword_after(parser: Parser, keyword: str, comma_seen: bool) -> None:
    """`, keyword =` (the comma may already have been read by `_operands`)."""
    if not comma_seen:
        parser.parse_punctuation(",")
    parser.parse_keyword(keyword)
    parser.parse_punctuation("=")


def _signature(parser: Parser, count: int) -> tuple[list[Attribute], list[Attribute]]:
    """`: T` (every operand and the result), `: (A, B) -> R`, or `: A, B` (select-style)."""
    parser.parse_punctuation(":")
    if parser.parse_optional_punctuation("(") is not None:
        inputs: list[Attribute] = []
        if parser.parse_optional_punctuation(")") is None:
            inputs = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
        parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("(") is not None:
            outputs = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
        else:
            outputs = [parser.parse_type()]
        return inputs, outputs
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    if len(types) == 1:
        return [types[0]] * count, [types[0]]
    # select prints `: pred_type, value_type` when both values have the result's type.
    first, rest = types[0], types[-1]
    return [first] + [rest] * (count - 1), [rest]


def _resolve(
    parser: Parser, operands: Sequence[UnresolvedOperand], types: Sequence[Attribute]
) -> list:
    if len(operands) != len(types):
        parser.raise_error(f"expected {len(types)} operand types, got {len(operands)} operands")
    return [
        parser.resolve_operand(operand, type_)
        for operand, type_ in zip(operands, types, strict=True)
    ]


def _finish(
    cls: type[IRDLOperation],
    parser: Parser,
    operands: Sequence[UnresolvedOperand],
    properties: dict[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
    count: int | None = None,
) -> IRDLOperation:
    attributes = parser.parse_optional_attr_dict()
    inputs, outputs = _signature(parser, len(operands) if count is None else count)
    values = _resolve(parser, operands, inputs)
    return cls.create(
        operands=values,
        result_types=outputs,
        properties=properties or {},
        attributes=attributes,
        regions=list(regions),
    )


class _StablehloOp(IRDLOperation):
    """Variadic operands and results; each op adds the properties and regions it reads."""

    inputs = var_operand_def()
    outputs = var_result_def()


class _PrettyOp(_StablehloOp):
    """Ops printed as `op %a, %b : types` (elementwise and the like)."""

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        if comma_seen:
            parser.raise_error("expected an operand after ','")
        return _finish(cls, parser, operands)


# ------------------------------------------------------------------------- elementwise ops


@irdl_op_definition
class AbsOp(_PrettyOp):
    name = "stablehlo.abs"


@irdl_op_definition
class CbrtOp(_PrettyOp):
    name = "stablehlo.cbrt"


@irdl_op_definition
class CeilOp(_PrettyOp):
    name = "stablehlo.ceil"


@irdl_op_definition
class ConvertOp(_PrettyOp):
    name = "stablehlo.convert"


@irdl_op_definition
class BitcastConvertOp(_PrettyOp):
    name = "stablehlo.bitcast_convert"


@irdl_op_definition
class ReshapeOp(_PrettyOp):
    name = "stablehlo.reshape"


@irdl_op_definition
class CosineOp(_PrettyOp):
    name = "stablehlo.cosine"


@irdl_op_definition
class CountLeadingZerosOp(_PrettyOp):
    name = "stablehlo.count_leading_zeros"


@irdl_op_definition
class ExpOp(_PrettyOp):
    name = "stablehlo.exponential"


@irdl_op_definition
class Expm1Op(_PrettyOp):
    name = "stablehlo.exponential_minus_one"


@irdl_op_definition
class FloorOp(_PrettyOp):
    name = "stablehlo.floor"


@irdl_op_definition
class ImagOp(_PrettyOp):
    name = "stablehlo.imag"


@irdl_op_definition
class IsFiniteOp(_PrettyOp):
    name = "stablehlo.is_finite"


@irdl_op_definition
class LogOp(_PrettyOp):
    name = "stablehlo.log"


@irdl_op_definition
class Log1pOp(_PrettyOp):
    name = "stablehlo.log_plus_one"


@irdl_op_definition
class LogisticOp(_PrettyOp):
    name = "stablehlo.logistic"


@irdl_op_definition
class NegOp(_PrettyOp):
    name = "stablehlo.negate"


@irdl_op_definition
class NotOp(_PrettyOp):
    name = "stablehlo.not"


@irdl_op_definition
class PopcntOp(_PrettyOp):
    name = "stablehlo.popcnt"


@irdl_op_definition
class RealOp(_PrettyOp):
    name = "stablehlo.real"


@irdl_op_definition
class RoundAfzOp(_PrettyOp):
    name = "stablehlo.round_nearest_afz"


@irdl_op_definition
class RoundEvenOp(_PrettyOp):
    name = "stablehlo.round_nearest_even"


@irdl_op_definition
class RsqrtOp(_PrettyOp):
    name = "stablehlo.rsqrt"


@irdl_op_definition
class SignOp(_PrettyOp):
    name = "stablehlo.sign"


@irdl_op_definition
class SineOp(_PrettyOp):
    name = "stablehlo.sine"


@irdl_op_definition
class SqrtOp(_PrettyOp):
    name = "stablehlo.sqrt"


@irdl_op_definition
class TanOp(_PrettyOp):
    name = "stablehlo.tan"


@irdl_op_definition
class TanhOp(_PrettyOp):
    name = "stablehlo.tanh"


@irdl_op_definition
class AddOp(_PrettyOp):
    name = "stablehlo.add"


@irdl_op_definition
class SubtractOp(_PrettyOp):
    name = "stablehlo.subtract"


@irdl_op_definition
class MultiplyOp(_PrettyOp):
    name = "stablehlo.multiply"


@irdl_op_definition
class DivideOp(_PrettyOp):
    name = "stablehlo.divide"


@irdl_op_definition
class RemainderOp(_PrettyOp):
    name = "stablehlo.remainder"


@irdl_op_definition
class MaxOp(_PrettyOp):
    name = "stablehlo.maximum"


@irdl_op_definition
class MinOp(_PrettyOp):
    name = "stablehlo.minimum"


@irdl_op_definition
class PowerOp(_PrettyOp):
    name = "stablehlo.power"


@irdl_op_definition
class AndOp(_PrettyOp):
    name = "stablehlo.and"


@irdl_op_definition
class OrOp(_PrettyOp):
    name = "stablehlo.or"


@irdl_op_definition
class XorOp(_PrettyOp):
    name = "stablehlo.xor"


@irdl_op_definition
class ShiftLeftOp(_PrettyOp):
    name = "stablehlo.shift_left"


@irdl_op_definition
class ShiftRightArithmeticOp(_PrettyOp):
    name = "stablehlo.shift_right_arithmetic"


@irdl_op_definition
class ShiftRightLogicalOp(_PrettyOp):
    name = "stablehlo.shift_right_logical"


@irdl_op_definition
class Atan2Op(_PrettyOp):
    name = "stablehlo.atan2"


@irdl_op_definition
class SelectOp(_PrettyOp):
    name = "stablehlo.select"


@irdl_op_definition
class ClampOp(_PrettyOp):
    name = "stablehlo.clamp"


@irdl_op_definition
class OptimizationBarrierOp(_PrettyOp):
    name = "stablehlo.optimization_barrier"


# ------------------------------------------------------------------------------ structural


@irdl_op_definition
class ReturnOp(_StablehloOp):
    name = "stablehlo.return"
    traits = traits_def(IsTerminator())

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands: list[UnresolvedOperand] = []
        if (first := parser.parse_optional_unresolved_operand()) is not None:
            operands = [first]
            while parser.parse_optional_punctuation(",") is not None:
                operands.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        types: list[Attribute] = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        return cls.create(operands=_resolve(parser, operands, types), attributes=attributes)


@irdl_op_definition
class ConstantOp(_StablehloOp):
    name = "stablehlo.constant"
    value = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        attributes = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        result_type = getattr(value, "type", None)
        if parser.parse_optional_punctuation(":") is not None:
            result_type = parser.parse_type()
        if result_type is None:
            parser.raise_error("stablehlo.constant needs a typed value")
        return cls.create(
            result_types=[result_type], properties={"value": value}, attributes=attributes
        )


@irdl_op_definition
class IotaOp(_StablehloOp):
    name = "stablehlo.iota"
    iota_dimension = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        parser.parse_keyword("dim")
        parser.parse_punctuation("=")
        dimension = parser.parse_integer()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(
            result_types=[result_type],
            properties={"iota_dimension": IntegerAttr(dimension, i64)},
            attributes=attributes,
        )


def _keyword_dims_op(keyword: str, prop: str) -> Callable[[type[IRDLOperation], Parser], object]:
    """A parser for `op %x, <keyword> = [..] : ...` (broadcast_in_dim, transpose, ...)."""

    def parse(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        _keyword_after(parser, keyword, comma_seen)
        return _finish(cls, parser, operands, {prop: _dims(_int_list(parser))})

    return parse


@irdl_op_definition
class BroadcastInDimOp(_StablehloOp):
    name = "stablehlo.broadcast_in_dim"
    broadcast_dimensions = opt_prop_def(Attribute)
    parse = classmethod(_keyword_dims_op("dims", "broadcast_dimensions"))


@irdl_op_definition
class TransposeOp(_StablehloOp):
    name = "stablehlo.transpose"
    permutation = opt_prop_def(Attribute)
    parse = classmethod(_keyword_dims_op("dims", "permutation"))


@irdl_op_definition
class ReverseOp(_StablehloOp):
    name = "stablehlo.reverse"
    dimensions = opt_prop_def(Attribute)
    parse = classmethod(_keyword_dims_op("dims", "dimensions"))


@irdl_op_definition
class ConcatenateOp(_StablehloOp):
    name = "stablehlo.concatenate"
    dimension = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        _keyword_after(parser, "dim", comma_seen)
        dimension = IntegerAttr(parser.parse_integer(), i64)
        return _finish(cls, parser, operands, {"dimension": dimension})


@irdl_op_definition
class SliceOp(_StablehloOp):
    name = "stablehlo.slice"
    start_indices = opt_prop_def(Attribute)
    limit_indices = opt_prop_def(Attribute)
    strides = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operand = parser.parse_unresolved_operand()
        starts: list[int] = []
        limits: list[int] = []
        strides: list[int] = []

        def parse_range() -> None:
            starts.append(parser.parse_integer())
            parser.parse_punctuation(":")
            limits.append(parser.parse_integer())
            stride = 1
            if parser.parse_optional_punctuation(":") is not None:
                stride = parser.parse_integer()
            strides.append(stride)

        parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_range)
        properties = {
            "start_indices": _dims(starts),
            "limit_indices": _dims(limits),
            "strides": _dims(strides),
        }
        return _finish(cls, parser, [operand], properties)


@irdl_op_definition
class DynamicSliceOp(_StablehloOp):
    name = "stablehlo.dynamic_slice"
    slice_sizes = opt_prop_def(Attribute)
    parse = classmethod(_keyword_dims_op("sizes", "slice_sizes"))


@irdl_op_definition
class DynamicUpdateSliceOp(_PrettyOp):
    name = "stablehlo.dynamic_update_slice"


@irdl_op_definition
class PadOp(_StablehloOp):
    name = "stablehlo.pad"
    edge_padding_low = opt_prop_def(Attribute)
    edge_padding_high = opt_prop_def(Attribute)
    interior_padding = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        properties: dict[str, Attribute] = {}
        for keyword, prop in (
            ("low", "edge_padding_low"),
            ("high", "edge_padding_high"),
            ("interior", "interior_padding"),
        ):
            _keyword_after(parser, keyword, comma_seen)
            comma_seen = False
            properties[prop] = _dims(_int_list(parser))
        return _finish(cls, parser, operands, properties)


@irdl_op_definition
class CompareOp(_StablehloOp):
    name = "stablehlo.compare"
    comparison_direction = opt_prop_def(Attribute)
    compare_type = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        direction = parser.parse_identifier()
        parser.parse_punctuation(",")
        operands, comma_seen = _operands(parser)
        properties: dict[str, Attribute] = {"comparison_direction": StringAttr(direction)}
        if comma_seen:
            properties["compare_type"] = StringAttr(parser.parse_identifier())
        return _finish(cls, parser, operands, properties)


def _parse_precision(parser: Parser) -> list[str]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_identifier)


@irdl_op_definition
class DotOp(_StablehloOp):
    name = "stablehlo.dot"
    precision_config = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        if comma_seen:
            parser.parse_keyword("precision")
            parser.parse_punctuation("=")
            _parse_precision(parser)
        return _finish(cls, parser, operands)


@irdl_op_definition
class DotGeneralOp(_StablehloOp):
    name = "stablehlo.dot_general"
    dot_dimension_numbers = opt_prop_def(Attribute)
    precision_config = opt_prop_def(Attribute)
    algorithm = opt_prop_def(Attribute)

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        operands, comma_seen = _operands(parser)
        numbers: dict[str, Attribute] = {}
        properties: dict[str, Attribute] = {}
        while comma_seen:
            keyword = parser.parse_identifier()
            parser.parse_punctuation("=")
            if keyword in ("batching_dims", "contracting_dims"):
                lhs = _int_list(parser)
                parser.parse_keyword("x")
                rhs = _int_list(parser)
                kind = keyword.removesuffix("_dims")
                numbers[f"lhs_{kind}_dimensions"] = _dims(lhs)
                numbers[f"rhs_{kind}_dimensions"] = _dims(rhs)
            elif keyword == "precision":
                _parse_precision(parser)
            elif keyword == "algorithm":
                properties["algorithm"] = parser.parse_attribute()
            else:
                parser.raise_error(f"unknown dot_general keyword {keyword!r}")
            comma_seen = parser.parse_optional_punctuation(",") is not None
        properties["dot_dimension_numbers"] = DictionaryAttr(numbers)
        return _finish(cls, parser, operands, properties)


@irdl_op_definition
class ReduceOp(_StablehloOp):
    """`stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [0] : ...`
    or the same with `across dimensions = [..] : types reducer(%a: T, %b: T) {...}`."""

    name = "stablehlo.reduce"
    dimensions = opt_prop_def(Attribute)
    body = var_region_def()

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        inputs: list[UnresolvedOperand] = []
        inits: list[UnresolvedOperand] = []

        def parse_pair() -> None:
            inputs.append(parser.parse_unresolved_operand())
            parser.parse_keyword("init")
            parser.parse_punctuation(":")
            inits.append(parser.parse_unresolved_operand())

        parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_pair)
        while parser.parse_optional_punctuation(",") is not None:
            parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_pair)
        applied: str | None = None
        if parser.parse_optional_keyword("applies") is not None:
            applied = parser.parse_identifier()
        parser.parse_keyword("across")
        parser.parse_keyword("dimensions")
        parser.parse_punctuation("=")
        dimensions = _dims(_int_list(parser))
        attributes = parser.parse_optional_attr_dict()
        input_types, output_types = _signature(parser, 2 * len(inputs))
        values = _resolve(parser, [*inputs, *inits], input_types)
        init_types = input_types[len(inputs) :]
        if applied is not None:
            if len(inputs) != 1:
                parser.raise_error("the compact `applies` form needs exactly one operand")
            region = _applied_region(parser, applied, init_types[0])
        else:
            parser.parse_keyword("reducer")
            accumulators: list[Parser.Argument] = []
            elements: list[Parser.Argument] = []
            for _ in inputs:
                pair = parser.parse_comma_separated_list(
                    parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
                )
                if len(pair) != 2:
                    parser.raise_error("a reducer takes (accumulator, element) pairs")
                accumulators.append(pair[0])
                elements.append(pair[1])
            region = parser.parse_region([*accumulators, *elements])
        return cls.create(
            operands=values,
            result_types=output_types,
            properties={"dimensions": dimensions},
            attributes=attributes,
            regions=[region],
        )


def _applied_region(parser: Parser, op_name: str, scalar_type: Attribute) -> Region:
    """The body the compact form stands for: `^bb0(%a, %b): %r = op %a, %b; return %r`."""
    op_type = parser.ctx.get_optional_op(op_name)
    if op_type is None or not issubclass(op_type, _StablehloOp):
        parser.raise_error(f"cannot apply {op_name} in a reduction")
    element_type = scalar_type
    if isinstance(scalar_type, TensorType) and scalar_type.get_shape():
        parser.raise_error("reduction init values must be rank-0 tensors")
    block = Block(arg_types=[element_type, element_type])
    combine = op_type.create(operands=list(block.args), result_types=[element_type])
    block.add_op(combine)
    block.add_op(ReturnOp.create(operands=list(combine.results)))
    return Region(block)


@irdl_op_definition
class WhileOp(_StablehloOp):
    """`stablehlo.while(%iterArg = %init, ...) : types cond {...} do {...}`."""

    name = "stablehlo.while"
    body = var_region_def()

    @classmethod
    def parse(cls, parser: Parser) -> IRDLOperation:
        names: list = []
        inits: list[UnresolvedOperand] = []

        def parse_binding() -> None:
            names.append(parser.parse_argument(expect_type=False))
            parser.parse_punctuation("=")
            inits.append(parser.parse_unresolved_operand())

        parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_binding)
        types: list[Attribute] = []
        if inits:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        values = _resolve(parser, inits, types)
        parser.parse_keyword("cond")
        cond = parser.parse_region([name.resolve(t) for name, t in zip(names, types, strict=True)])
        parser.parse_keyword("do")
        body = parser.parse_region([name.resolve(t) for name, t in zip(names, types, strict=True)])
        return cls.create(
            operands=values,
            result_types=types,
            attributes=attributes.data if attributes else {},
            regions=[cond, body],
        )


# Ops JAX prints in generic form: only their properties are declared.


@irdl_op_definition
class SortOp(_StablehloOp):
    name = "stablehlo.sort"
    dimension = opt_prop_def(Attribute)
    is_stable = opt_prop_def(Attribute)
    comparator = var_region_def()


@irdl_op_definition
class ReduceWindowOp(_StablehloOp):
    name = "stablehlo.reduce_window"
    window_dimensions = opt_prop_def(Attribute)
    window_strides = opt_prop_def(Attribute)
    base_dilations = opt_prop_def(Attribute)
    window_dilations = opt_prop_def(Attribute)
    padding = opt_prop_def(Attribute)
    body = var_region_def()


@irdl_op_definition
class GatherOp(_StablehloOp):
    name = "stablehlo.gather"
    dimension_numbers = opt_prop_def(Attribute)
    slice_sizes = opt_prop_def(Attribute)
    indices_are_sorted = opt_prop_def(Attribute)


@irdl_op_definition
class ScatterOp(_StablehloOp):
    name = "stablehlo.scatter"
    scatter_dimension_numbers = opt_prop_def(Attribute)
    indices_are_sorted = opt_prop_def(Attribute)
    unique_indices = opt_prop_def(Attribute)
    update_computation = var_region_def()


STABLEHLO_OPS: list[type[IRDLOperation]] = [
    value
    for value in list(globals().values())
    if isinstance(value, type)
    and issubclass(value, _StablehloOp)
    and value.__dict__.get("name", "").startswith("stablehlo.")
]

StableHLO = Dialect("stablehlo", STABLEHLO_OPS, [])

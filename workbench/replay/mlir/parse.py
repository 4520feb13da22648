"""Parse printed MLIR (as compilers dump it) into an xDSL module for the replay.

What real dumps contain that xDSL's parser does not take as is, and how it is handled here
(by extending the parser, never by rewriting the text):

- source ranges in locations (`loc("program.py":6:21 to :32)`, as JAX prints them): read as
  the range's start.
- location aliases defined after their use (`loc(#loc4)` ... `#loc4 = loc("f.py":3:1)` at the
  end of the file, as `--mlir-print-debuginfo` prints): the alias definitions are parsed as
  locations, and a use before its definition becomes an unknown location. Locations do not
  change what a program computes.
- hexadecimal float elements in dense literals (`dense<0xFF800000> : tensor<f32>` is -inf, how
  MLIR prints non-finite values; `dense<(0x7FC00000,0.0)>` a complex NaN): read as the bit
  pattern of the element type, as MLIR does. xDSL converts the integer's value instead.
- custom-syntax ops of dialects the replay does not implement (`flow.dispatch`, `hal.*`,
  `util.global`, ...): parsing stops with `Unsupported(<op name>)`, the honest status for
  that step. Generic-form ops of such dialects parse and are reported when they would run.
- dense resources (`dense_resource<blob>` with the `{-# dialect_resources ... #-}` section):
  each parse gets its own builtin dialect, so blobs of one module never leak into another.
  `external_resources` (a crash reproducer's pipeline and flags) are read past: they
  configure a tool, not the program.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import affine, arith, builtin, cf, func, math, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FileLineColLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
    UnregisteredAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.parser import Parser, ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from workbench.replay.errors import MlirParseError, Unsupported
from workbench.replay.mlir.dialects.bufferization import Bufferization
from workbench.replay.mlir.dialects.chlo import CHLO
from workbench.replay.mlir.dialects.linalg import Linalg
from workbench.replay.mlir.dialects.memref import MemRef
from workbench.replay.mlir.dialects.sdy import SDY
from workbench.replay.mlir.dialects.stablehlo import StableHLO
from workbench.replay.mlir.values import dtype_of

# The dialects whose ops the replay can parse (and, for the most part, run). Ops of any other
# dialect are unsupported.
DIALECTS: Sequence[Dialect] = (
    arith.Arith,
    math.Math,
    func.Func,
    scf.Scf,
    cf.Cf,
    MemRef,
    tensor.Tensor,
    Linalg,
    Bufferization,
    StableHLO,
    CHLO,
    SDY,
    affine.Affine,
)


class _UnsupportedCustomOp(UnregisteredOp):
    """Marker base for ops of dialects the replay does not know."""


class _ReplayContext(Context):
    """Unknown ops parse in generic form; in custom form they are `Unsupported`."""

    def get_optional_op(
        self, name: str, *, dialect_stack: Sequence[str] = ()
    ) -> type[Operation] | None:
        op_type = super().get_optional_op(name, dialect_stack=dialect_stack)
        if op_type is None or not issubclass(op_type, UnregisteredOp):
            return op_type
        if issubclass(op_type, _UnsupportedCustomOp):
            return op_type

        class UnsupportedOp(op_type, _UnsupportedCustomOp):
            @classmethod
            def parse(cls, parser: Parser) -> Operation:
                raise Unsupported(name)

        self._loaded_ops[name] = UnsupportedOp
        return UnsupportedOp


def _hex_float(text: str, element_type: AnyFloat) -> float:
    """A float from the bit pattern MLIR prints for it (`0x7FC00000` is NaN in f32)."""
    dtype = dtype_of(element_type)
    bits = np.array([int(text, 16)], dtype=np.uint64).astype(f"u{dtype.itemsize}")
    return float(bits.view(dtype)[0].astype(np.float64))


class _ReplayLexer(MLIRLexer):
    """xDSL's lexer with a string literal pattern that fails in linear time.

    xDSL's pattern nests a `+` inside a `*` (`"(?:[^"\\...]+|\\...)*"`), so an unterminated
    string, which a damaged dump easily has (`%1 = memref"load %arg1[...] : ...`), backtracks
    exponentially in the length of the rest of its line: the parse never ends. This one
    matches the same strings (plain characters, then escapes each followed by plain
    characters) with a single way to split them.
    """

    _unescaped_characters_regex = re.compile(
        r'"[^"\\\n\v\f]*(?:\\(?:["nt\\]|[0-9A-Fa-f]{2})[^"\\\n\v\f]*)*"'
    )


class ReplayParser(Parser):
    """xDSL's parser, taking the forms real compiler dumps print (see the module doc)."""

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_ReplayLexer(Input(text, name)))

    def _parse_location(self) -> LocationAttr:
        token = self._current_token
        if token.kind == MLIRTokenKind.HASH_IDENT and token.text not in self.attribute_aliases:
            self._consume_token(MLIRTokenKind.HASH_IDENT)
            return UnknownLoc()
        if token.kind == MLIRTokenKind.STRING_LIT:
            return self._parse_file_location()
        return super()._parse_location()

    def _parse_file_location(self) -> LocationAttr:
        """`"file":line:col`, with the range forms JAX prints (`"f.py":6:21 to :32`,
        `... to 7:3`), or a name location `"name"(<location>)`."""
        filename = self.parse_str_literal()
        if self.parse_optional_punctuation(":") is None:
            nested: Attribute = NoneAttr()
            if self._current_token.kind == MLIRTokenKind.L_PAREN:
                with self.in_parens():
                    nested = self._parse_location()
            return NameLoc(StringAttr(filename), nested)
        line = self.parse_integer(False, False)
        self.parse_punctuation(":")
        column = self.parse_integer(False, False)
        if self.parse_optional_keyword("to") is not None:
            if self.parse_optional_punctuation(":") is None:
                self.parse_integer(False, False)
                self.parse_punctuation(":")
            self.parse_integer(False, False)
        return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(column))

    def _parse_alias_def(self) -> None:
        token = self._current_token
        if token.kind == MLIRTokenKind.HASH_IDENT and token.text.startswith("#loc"):
            self._consume_token(MLIRTokenKind.HASH_IDENT)
            self.parse_punctuation("=")
            self.parse_characters("loc")
            with self.in_parens():
                location = self._parse_location()
            self.attribute_aliases.setdefault(token.text, location)
            return
        super()._parse_alias_def()

    def parse_optional_attribute(self) -> Attribute | None:
        attribute = super().parse_optional_attribute()
        if isinstance(attribute, UnregisteredAttr):
            # Attributes of other dialects may carry a type: `#hal.device.alias<"x"> : !hal.device`.
            position = self.pos
            if self.parse_optional_punctuation(":") is not None:
                if self._current_token.kind == MLIRTokenKind.EXCLAMATION_IDENT:
                    self.parse_type()
                else:
                    self._resume_from(position)
        return attribute

    def _parse_external_resources(self) -> None:
        self._skip_resource_value()

    def _skip_resource_value(self) -> None:
        """`{ key: value, ... }` where a value is a literal or another such dictionary."""
        if self.parse_optional_punctuation("{") is None:
            if self.parse_optional_str_literal() is None and self.parse_optional_boolean() is None:
                self.parse_integer()
            return
        if self.parse_optional_punctuation("}") is not None:
            return
        while True:
            self.parse_identifier_or_str_literal()
            self.parse_punctuation(":")
            self._skip_resource_value()
            if self.parse_optional_punctuation(",") is None:
                break
        self.parse_punctuation("}")

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        if self._current_token.kind == MLIRTokenKind.L_PAREN:
            return self._parse_complex_element()
        element = super()._parse_tensor_literal_element()
        if _is_hex(element.span.text):
            return _HexElement(element.is_negative, element.value, element.span)
        return element

    def _parse_complex_element(self) -> Parser._TensorLiteralElement:
        """`(re, im)`, either part possibly a hex bit pattern (`(0x7FC00000,0.0)` is NaN+0i)."""
        start = self._current_token.span
        self.parse_punctuation("(")
        real, real_span = self._parse_bool_int_or_float()
        self.parse_punctuation(",")
        imaginary, imaginary_span = self._parse_bool_int_or_float()
        end = self._current_token.span
        self.parse_punctuation(")")
        span = Span(start.start, end.end, start.input)
        return _ComplexElement(False, (real, imaginary), span, real_span.text, imaginary_span.text)


def _is_hex(text: str) -> bool:
    return text[:2] in ("0x", "0X")


class _HexElement(Parser._TensorLiteralElement):
    """A dense literal element written in hex: for float types it is a bit pattern."""

    def to_type(self, parser: Parser, type: Attribute) -> object:  # xDSL's is untyped
        if isinstance(type, AnyFloat):
            return _hex_float(self.span.text, type)
        return super().to_type(parser, type)


class _ComplexElement(Parser._TensorLiteralElement):
    """A complex element; its parts' texts say which are bit patterns."""

    def __init__(
        self, is_negative: bool, value: Any, span: Span, real_text: str, imaginary_text: str
    ) -> None:
        super().__init__(is_negative, value, span)
        self.texts = (real_text, imaginary_text)

    def to_type(self, parser: Parser, type: Attribute) -> object:  # xDSL's is untyped
        if isinstance(type, ComplexType) and isinstance(type.element_type, AnyFloat):
            return tuple(
                _hex_float(text, type.element_type) if _is_hex(text) else float(part)
                for text, part in zip(self.texts, self.value, strict=True)
            )
        return super().to_type(parser, type)


def _context() -> _ReplayContext:
    context = _ReplayContext(allow_unregistered=True)
    # A builtin dialect of its own: dense resource blobs live in its interface.
    context.load_dialect(
        Dialect(
            "builtin",
            list(builtin.Builtin.operations),
            list(builtin.Builtin.attributes),
            [OpAsmDialectInterface()],
        )
    )
    for dialect in DIALECTS:
        context.register_dialect(dialect.name, lambda dialect=dialect: dialect)
    return context


@functools.lru_cache(maxsize=8)
def parse_module(text: str, name: str = "<ir>") -> tuple[ModuleOp, dict[str, str]]:
    """The module in `text` and its dense resource blobs (handle -> hex string).

    Raises `MlirParseError` with the parser's message, or `Unsupported` for an op of a
    dialect the replay does not implement. Parsing costs more than interpreting most steps,
    and consecutive passes often print the same module (or a replay runs the same step on
    several executions), so the last few parses are kept; callers must not modify them.
    """
    context = _context()
    try:
        parser = ReplayParser(context, text, name)  # reads the first token already
        module = parser.parse_module()
    except ParseError as error:
        raise MlirParseError(str(error).strip()) from None
    except (VerifyException, NotImplementedError, ValueError, KeyError, IndexError,
            AssertionError, OverflowError) as error:
        # xDSL checks some constraints while it builds ops, some by asserting or by indexing
        # operands a damaged op lacks (`linalg.matmul` with one input), or packing a float
        # constant that its type cannot hold; say where we were.
        where = parser._current_token.span.get_location()
        detail = f": {error}" if str(error) else ""
        raise MlirParseError(f"{where}: cannot build the operation before this point "
                             f"({type(error).__name__}{detail})") from None
    except RecursionError:
        # xDSL parses nested regions recursively: IR nested thousands deep (a damaged dump,
        # `module {module {...`) exhausts Python's stack.
        raise MlirParseError(f"{name}: nested too deeply to parse") from None
    interface = context.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    handles = [key for dialect, key in parser.dialect_resources if dialect == "builtin"]
    resources = interface.build_resources(handles) if interface is not None else {}
    return module, resources

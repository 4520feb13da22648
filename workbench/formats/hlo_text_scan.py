"""The text cursor under the HLO text reader (`hlo_text.py`): whitespace and comments, names,
bracket groups cut out whole, attribute values as printed, and shapes (array shapes are made
once per distinct spelling). Errors carry the file, line and column (`HloParseError`)."""

from __future__ import annotations

import re

from workbench.hlo_ir import ARRAY_TYPES, Shape
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
NAME_BODY = r"(?:(?<=%)[\w.\-$]+|[A-Za-z_$][\w.\-$]*)"
_NAME = re.compile(r"%?(" + NAME_BODY + ")")
INT = re.compile(r"-?\d+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SIMPLE_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?")
SHAPE_HEAD = re.compile(r"([a-z][a-z0-9]*)\[([^\]\[]*)\]")
_VALUE_STOP = re.compile(r'[{}()\[\]"\s,]')
_BRACE_STOP = re.compile(r'[{}"]')
_PAREN_STOP = re.compile(r'[()"]')
_LINE_END = re.compile(r"[ \t]*")
_NON_ARRAY_TYPES = ("token", "opaque")


class TextScanner:
    """A position in one module's text, and the reading of its tokens and shapes."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.pos = 0
        self.shapes: dict[str, Shape] = {}  # by spelling: each distinct shape made once

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
        head = SHAPE_HEAD.match(text, self.pos)
        if head is None:
            raise self.error("expected a shape such as f32[2,3]{1,0}")
        end = self.closing(head.end(), "{") if text.startswith("{", head.end()) else head.end()
        shape = self.array_shape(self.pos, end)
        self.pos = end
        return shape

    def array_shape(self, start: int, end: int) -> Shape:
        head = SHAPE_HEAD.match(self.text, start)
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

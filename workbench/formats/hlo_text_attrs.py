"""Typed values of HLO text instruction attributes (`window={...}`, `dim_labels=...`, ...).

Each function takes the attribute's value exactly as printed and returns the typed value of
`workbench.hlo_ir`, or raises `AttributeTextError(message, offset)` with the offset of the
bad character inside the value, so the parser can report line and column. The same values
recur on thousands of lines (`dimensions={1}`, a metadata block shared by a fusion's ops), and
the results are immutable, so the functions are memoized.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache
from typing import Any

from workbench.hlo_ir import (
    ConvolutionDimensionNumbers,
    Metadata,
    PaddingDimension,
    SliceDimension,
    WindowDimension,
)

_INT = re.compile(r"\s*(-?\d+)\s*")
_SLICE = re.compile(r"\s*\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?\]\s*")
_PAIR = re.compile(r'([A-Za-z_][\w.\-]*)=("(?:[^"\\]|\\.)*"|[^\s}"]+)')
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class AttributeTextError(ValueError):
    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def unquote(text: str) -> str:
    """A C-escaped string literal as XLA prints it (`"a\\"b"`), without the quotes."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise AttributeTextError("expected a quoted string")
    body = text[1:-1]
    if "\\" not in body:
        return body
    try:
        return codecs.escape_decode(body.encode("utf-8"))[0].decode("utf-8")
    except (ValueError, UnicodeDecodeError) as error:
        raise AttributeTextError(f"bad escape in string: {error}") from None


def braced_inner(text: str) -> str:
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        raise AttributeTextError("expected a value in braces {...}")
    return text[1:-1]


def int_value(text: str) -> int:
    match = _INT.fullmatch(text)
    if match is None:
        raise AttributeTextError(f"expected an integer, got {text!r}")
    return int(match[1])


def bool_value(text: str) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    raise AttributeTextError(f"expected true or false, got {text!r}")


@lru_cache(maxsize=4096)
def int_list(text: str) -> tuple[int, ...]:
    """`{1,0}` -> (1, 0); `{}` -> ()."""
    inner = braced_inner(text)
    if not inner.strip():
        return ()
    values = []
    offset = 1
    for part in inner.split(","):
        match = _INT.fullmatch(part)
        if match is None:
            raise AttributeTextError(f"expected an integer, got {part.strip()!r}", offset)
        values.append(int(match[1]))
        offset += len(part) + 1
    return tuple(values)


def name_list(text: str) -> list[str]:
    """`{%a, %b}` or `%a` -> ['a', 'b'] (computation references)."""
    inner = braced_inner(text) if text.startswith("{") else text
    names = [part.strip() for part in inner.split(",") if part.strip()]
    return [name[1:] if name.startswith("%") else name for name in names]


@lru_cache(maxsize=4096)
def slice_value(text: str) -> tuple[SliceDimension, ...]:
    """`{[0:5], [1:9:2]}`: start, limit and optional stride per dimension."""
    inner = braced_inner(text)
    if not inner.strip():
        return ()
    dims = []
    offset = 1
    for part in inner.split(","):
        match = _SLICE.fullmatch(part)
        if match is None:
            raise AttributeTextError(f"expected [start:limit:stride], got {part.strip()!r}",
                                     offset)
        stride = int(match[3]) if match[3] is not None else 1
        dims.append(SliceDimension(int(match[1]), int(match[2]), stride))
        offset += len(part) + 1
    return tuple(dims)


@lru_cache(maxsize=4096)
def padding_value(text: str) -> tuple[PaddingDimension, ...]:
    """`0_1x2_3_1`: low_high[_interior] per dimension, joined by `x`."""
    if not text:
        return ()
    dims = []
    offset = 0
    for part in text.split("x"):
        numbers = part.split("_")
        try:
            values = [int(n) for n in numbers]
        except ValueError:
            values = []
        if len(values) not in (2, 3):
            raise AttributeTextError(f"expected low_high[_interior], got {part!r}", offset)
        dims.append(PaddingDimension(*values))
        offset += len(part) + 1
    return tuple(dims)


_WINDOW_KEYS = {
    "size": "size", "stride": "stride", "pad": "pad", "lhs_dilate": "base_dilation",
    "rhs_dilate": "window_dilation", "rhs_reversal": "window_reversal",
}


@lru_cache(maxsize=4096)
def window_value(text: str) -> tuple[WindowDimension, ...]:
    """`{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`."""
    inner = braced_inner(text)
    fields: dict[str, list] = {}
    for match in re.finditer(r"(\S+?)=(\S+)", inner):
        key, value = match[1], match[2]
        name = _WINDOW_KEYS.get(key)
        if name is None:
            raise AttributeTextError(f"unknown window field {key!r}", match.start() + 1)
        parts = value.split("x")
        try:
            if name == "pad":
                pairs = [tuple(int(n) for n in p.split("_")) for p in parts]
                if any(len(pair) != 2 for pair in pairs):
                    raise ValueError
                fields["padding_low"] = [p[0] for p in pairs]
                fields["padding_high"] = [p[1] for p in pairs]
            elif name == "window_reversal":
                fields[name] = [bool(int(p)) for p in parts]
            else:
                fields[name] = [int(p) for p in parts]
        except ValueError:
            raise AttributeTextError(f"bad window {key} {value!r}", match.start(2) + 1) from None
    if not fields:
        if inner.strip():
            raise AttributeTextError("expected window fields such as size=3x3", 1)
        return ()
    if "size" not in fields:
        raise AttributeTextError("window without size=", 1)
    rank = len(fields["size"])
    for key, values in fields.items():
        if len(values) != rank:
            raise AttributeTextError(f"window {key} has {len(values)} dimensions, size has {rank}")
    return tuple(
        WindowDimension(**{key: values[i] for key, values in fields.items()}) for i in range(rank)
    )


@lru_cache(maxsize=4096)
def dim_labels_value(text: str) -> ConvolutionDimensionNumbers:
    """`b01f_01io->b01f`: batch/feature letters and spatial digits of input, kernel, output."""
    match = re.fullmatch(r"([^_]+)_([^-]+)->(.+)", text)
    if match is None:
        raise AttributeTextError(f"expected dim_labels like b01f_01io->b01f, got {text!r}")
    lhs, rhs, out = match[1], match[2], match[3]

    def split(labels: str, first: str, second: str, offset: int) -> tuple[int, int, tuple]:
        spatial = sorted((c, i) for i, c in enumerate(labels) if c.isdigit())
        if (labels.count(first) != 1 or labels.count(second) != 1
                or len(spatial) + 2 != len(labels)
                or [c for c, _ in spatial] != [str(k) for k in range(len(spatial))]):
            raise AttributeTextError(f"bad dim_labels part {labels!r}", offset)
        return labels.index(first), labels.index(second), tuple(i for _, i in spatial)

    batch, feature, input_spatial = split(lhs, "b", "f", 0)
    kernel_in, kernel_out, kernel_spatial = split(rhs, "i", "o", len(lhs) + 1)
    out_batch, out_feature, output_spatial = split(out, "b", "f", match.start(3))
    return ConvolutionDimensionNumbers(
        input_batch_dimension=batch,
        input_feature_dimension=feature,
        input_spatial_dimensions=input_spatial,
        kernel_input_feature_dimension=kernel_in,
        kernel_output_feature_dimension=kernel_out,
        kernel_spatial_dimensions=kernel_spatial,
        output_batch_dimension=out_batch,
        output_feature_dimension=out_feature,
        output_spatial_dimensions=output_spatial,
    )


_METADATA_INTS = frozenset(
    ("source_line", "source_end_line", "source_column", "source_end_column", "stack_frame_id")
)
_METADATA_STRINGS = frozenset(
    ("op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name")
)


@lru_cache(maxsize=4096)
def metadata_value(text: str) -> Metadata:
    """`{op_name="jit(f)/add" source_file="f.py" source_line=3 stack_frame_id=2}`.

    Keys the workbench does not model (profile information) are skipped: they say nothing
    about what the instruction computes or where it came from.
    """
    fields: dict[str, Any] = {}  # each key's own type, checked as it is parsed
    inner = braced_inner(text)
    pairs = ((m[1], m[2], m.start(2) + 1) for m in _PAIR.finditer(inner)) if "{" not in inner \
        else key_values(inner, 1)
    for key, value, offset in pairs:
        if key in _METADATA_INTS:
            try:
                fields[key] = int(value)
            except ValueError:
                raise AttributeTextError(f"metadata {key} is not an integer", offset) from None
        elif key in _METADATA_STRINGS:
            fields[key] = unquote(value) if value.startswith('"') else value
    return Metadata(**fields)


def key_values(inner: str, base: int = 0) -> list[tuple[str, str, int]]:
    """`a=1 b="x y" c={...}` -> [(key, raw value, offset of value)], braces kept balanced."""
    items = []
    pos = 0
    length = len(inner)
    while pos < length:
        while pos < length and inner[pos] in " \t\n,":
            pos += 1
        if pos >= length:
            break
        equals = inner.find("=", pos)
        if equals < 0:
            raise AttributeTextError(f"expected key=value, got {inner[pos:pos + 20]!r}",
                                     base + pos)
        key = inner[pos:equals].strip()
        start = end = equals + 1
        if inner.startswith('"', start):
            match = _STRING.match(inner, start)
            if match is None:
                raise AttributeTextError("unterminated string", base + start)
            end = match.end()
        elif inner.startswith("{", start):
            depth = 0
            while end < length:
                char = inner[end]
                if char == '"':
                    match = _STRING.match(inner, end)
                    if match is None:
                        raise AttributeTextError("unterminated string", base + end)
                    end = match.end()
                    continue
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        end += 1
                        break
                end += 1
            else:
                raise AttributeTextError("unbalanced '{'", base + start)
        else:
            while end < length and inner[end] not in " \t\n,":
                end += 1
        items.append((key, inner[start:end], base + start))
        pos = end
    return items

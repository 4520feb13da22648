"""Constants as HLO text prints them: `constant(1)`, `constant({ {1, 2}, {3, 4} })`, complex
`(1, 0)`, tuples `( {1, 2}, 3 )`, special values `inf`, `-inf`, `nan`, `-nan`, `nan(0x1)`.

Elements are printed in logical (row-major) order whatever the layout, so the array is built
in that order. Errors are `LiteralTextError(message, offset)`, the offset counted from the
start of the literal text, so the caller can point at the exact character.
"""

from __future__ import annotations

import re

import numpy as np

from workbench.hlo_ir import LiteralValue, Shape, numpy_dtype

_ATOM = re.compile(r"-?nan\(0x[0-9a-fA-F]+\)|[^\s{}(),]+")
# Arrays of rank 3 and more carry index comments before their inner groups:
# `{ { /*i0=0*/ { /*i1=0*/ {0} } } }` (XLA's literal printer); they are not elements.
_INDEX_COMMENT = re.compile(r"/\*.*?\*/")
_SPACE = re.compile(r"\s*")


def _skip_space(text: str, pos: int) -> int:
    """Where the white space at `pos` ends."""
    space = _SPACE.match(text, pos)
    assert space is not None  # the pattern matches the empty string
    return space.end()
_BRACE = re.compile(r"[{}]")
_NAN_PAYLOAD = re.compile(r"(-?)nan\(0x([0-9a-fA-F]+)\)")
_SHAPE_PREFIX = re.compile(r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?\s*")
_INT_TYPES = frozenset(
    ("s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32", "u64")
)


class LiteralTextError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def is_elided(text: str) -> bool:
    """True for `{...}`: a constant the dump left out (more than 10 elements)."""
    return text.strip() == "{...}"


def parse_literal_text(text: str, shape: Shape) -> LiteralValue:
    """The value of a printed literal of `shape`: an ndarray, or a tuple for tuple shapes."""
    prefix = _SHAPE_PREFIX.match(text)  # older dumps: `constant(f32[2] {1, 2})`
    start = prefix.end() if prefix and "[" in prefix.group() else 0
    value, end = _literal(text, _skip_space(text, start), shape)
    end = _skip_space(text, end)
    if end != len(text):
        raise LiteralTextError("unexpected text after the literal", end)
    return value


def _literal(text: str, pos: int, shape: Shape) -> tuple[LiteralValue, int]:
    if shape.is_tuple:
        return _tuple(text, pos, shape)
    if not shape.is_array:
        raise LiteralTextError(f"a {shape.element_type} value cannot be a literal", pos)
    try:
        dtype = numpy_dtype(shape.element_type)
    except ValueError as error:
        raise LiteralTextError(str(error), pos) from None
    if shape.rank == 0:
        end = _scalar_end(text, pos, shape.element_type)
        atoms = _ATOM.findall(text, pos, end)
        depth = 0
    else:
        if not text.startswith("{", pos):
            raise LiteralTextError(f"expected '{{' to start a {shape} literal", pos)
        end, depth = _group_end(text, pos)
        atoms = _ATOM.findall(_INDEX_COMMENT.sub(" ", text[pos:end]))
    per_element = 2 if shape.element_type in ("c64", "c128") else 1
    if len(atoms) != shape.size * per_element:
        raise LiteralTextError(
            f"{shape} literal has {len(atoms) // per_element} elements, expected {shape.size}",
            pos,
        )
    if shape.size and shape.rank and depth != shape.rank:
        raise LiteralTextError(f"{shape} literal nests {depth} levels of braces", pos)
    try:
        array = _convert(atoms, shape.element_type, dtype)
    except ValueError as error:
        raise LiteralTextError(f"bad {shape.element_type} value: {error}", pos) from None
    return array.reshape(shape.dims), end


def _tuple(text: str, pos: int, shape: Shape) -> tuple[LiteralValue, int]:
    if not text.startswith("(", pos):
        raise LiteralTextError(f"expected '(' to start a {shape} literal", pos)
    pos += 1
    elements = []
    for index, element_shape in enumerate(shape.tuple_shapes):
        pos = _skip_space(text, pos)
        if index:
            if not text.startswith(",", pos):
                raise LiteralTextError("expected ',' between tuple elements", pos)
            pos = _skip_space(text, pos + 1)
        value, pos = _literal(text, pos, element_shape)
        elements.append(value)
    pos = _skip_space(text, pos)
    if not text.startswith(")", pos):
        raise LiteralTextError(f"expected ')' after {len(shape.tuple_shapes)} tuple elements", pos)
    return tuple(elements), pos + 1


def _scalar_end(text: str, pos: int, element_type: str) -> int:
    if element_type in ("c64", "c128"):
        close = text.find(")", pos)
        if not text.startswith("(", pos) or close < 0:
            raise LiteralTextError("expected a complex value '(re, im)'", pos)
        return close + 1
    match = _ATOM.match(text, pos)
    if match is None:
        raise LiteralTextError(f"expected a {element_type} value", pos)
    return match.end()


def _group_end(text: str, pos: int) -> tuple[int, int]:
    """End of the brace group starting at `pos`, and its deepest nesting."""
    depth = deepest = 0
    for match in _BRACE.finditer(text, pos):
        if match.group() == "{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
            if depth == 0:
                return match.end(), deepest
    raise LiteralTextError("unbalanced '{' in literal", pos)


def _convert(atoms: list[str], element_type: str, dtype: np.dtype) -> np.ndarray:
    if element_type == "pred":
        values = {"true": True, "false": False, "1": True, "0": False}
        try:
            return np.array([values[a] for a in atoms], dtype=np.bool_)
        except KeyError as error:
            raise ValueError(f"{error.args[0]!r} is not true/false") from None
    if element_type in _INT_TYPES:
        ints = [int(a) for a in atoms]
        info = np.iinfo(np.int64 if element_type[0] == "s" else np.uint64)
        bits = int(element_type[1:])
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if element_type[0] == "s" \
            else (0, (1 << bits) - 1)
        for value in ints:
            if not low <= value <= high:
                raise ValueError(f"{value} out of range for {element_type}")
        wide = np.array(ints, dtype=info.dtype)
        return wide.astype(dtype)
    if element_type in ("c64", "c128"):
        part = np.float32 if element_type == "c64" else np.float64
        # (re, im) pairs are interleaved exactly as a complex array lays them out; arithmetic
        # such as `re + 1j * im` would turn an infinite part into NaN.
        return np.array([_float(a) for a in atoms], dtype=np.float64).astype(part).view(dtype)
    if any("(" in a for a in atoms):
        return np.array([_float_with_payload(a, dtype) for a in atoms], dtype=dtype)
    return np.array([_float(a) for a in atoms], dtype=np.float64).astype(dtype)


def _float(atom: str) -> float:
    if atom.startswith("nan("):
        raise ValueError(f"{atom!r}: NaN payloads are not kept in complex values")
    return float(atom)


def _float_with_payload(atom: str, dtype: np.dtype) -> np.generic:
    """A NaN printed with its payload, `nan(0x...)`: rebuild the exact bit pattern."""
    match = _NAN_PAYLOAD.fullmatch(atom)
    if match is None:
        return dtype.type(float(atom))
    import ml_dtypes

    info = ml_dtypes.finfo(dtype)
    nbits = dtype.itemsize * 8
    sign = 1 if match[1] else 0
    bits = (sign << (nbits - 1)) | (((1 << info.nexp) - 1) << info.nmant) | int(match[2], 16)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return unsigned.type(bits).view(dtype)

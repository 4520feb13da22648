"""Reading StableHLO op attributes in both the forms the parser produces.

Pretty-printed ops store builtin attributes (`array<i64: ...>`, strings, a dictionary for dot
dimension numbers); generic-form ops keep StableHLO's own attributes, which xDSL holds as
unregistered attributes: `#stablehlo<comparison_direction LT>` has the name
`stablehlo.comparison_direction` and the text ` LT`; `#stablehlo.gather<offset_dims = [1]>`
has the name `stablehlo.gather` and the text between the angle brackets. These helpers read
either form.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    UnregisteredAttr,
)
from xdsl.ir import Attribute, Operation

from workbench.replay.errors import Unsupported
from workbench.replay.mlir.values import static_shape

_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)")


def prop(op: Operation, name: str) -> Attribute | None:
    """A property, or an attribute of that name (older generic prints use the attr-dict)."""
    value = op.properties.get(name)
    return value if value is not None else op.attributes.get(name)


def int_list(op: Operation, name: str, default: list[int] | None = None) -> list[int]:
    attribute = prop(op, name)
    if attribute is None:
        if default is None:
            raise Unsupported(f"{op.name} without {name}")
        return default
    if isinstance(attribute, DenseArrayBase):
        return [int(value) for value in attribute.get_values()]
    if isinstance(attribute, DenseIntOrFPElementsAttr):
        return [int(value) for value in np.asarray(attribute.get_values()).ravel()]
    if isinstance(attribute, ArrayAttr):
        return [int(value.value.data) for value in attribute.data]
    raise Unsupported(f"{op.name} attribute {name} = {attribute}")


def int_matrix(op: Operation, name: str) -> np.ndarray | None:
    """A 2-D integer attribute such as reduce_window's `padding = dense<[[0, 0]]>`."""
    attribute = prop(op, name)
    if attribute is None:
        return None
    if isinstance(attribute, DenseIntOrFPElementsAttr):
        shape = static_shape(attribute.get_type())
        return np.asarray(attribute.get_values(), dtype=np.int64).reshape(shape)
    raise Unsupported(f"{op.name} attribute {name} = {attribute}")


def int_value(op: Operation, name: str) -> int:
    attribute = prop(op, name)
    if isinstance(attribute, IntegerAttr):
        return int(attribute.value.data)
    raise Unsupported(f"{op.name} attribute {name} = {attribute}")



def enum(op: Operation, name: str) -> str | None:
    """`LT` from `"LT"` (pretty form) or `#stablehlo<comparison_direction LT>`."""
    attribute = prop(op, name)
    if attribute is None:
        return None
    if isinstance(attribute, StringAttr):
        return attribute.data
    if isinstance(attribute, UnregisteredAttr) and attribute.value.data.strip().isidentifier():
        return attribute.value.data.strip()
    raise Unsupported(f"{op.name} attribute {name} = {attribute}")


def dimension_numbers(op: Operation, name: str) -> dict[str, Any]:
    """Fields of `#stablehlo.dot<...>`, `#stablehlo.gather<...>`, `#stablehlo.scatter<...>`
    (or the dictionary the pretty `dot_general` form stores): lists and integers."""
    attribute = prop(op, name)
    if attribute is None:
        raise Unsupported(f"{op.name} without {name}")
    fields: dict[str, Any] = {}
    if isinstance(attribute, DictionaryAttr):
        for key, value in attribute.data.items():
            # xDSL types a DictionaryAttr's values as Attribute; here they are dense arrays.
            fields[key] = [int(v) for v in value.get_values()]  # type: ignore[attr-defined]  # dense
        return fields
    if isinstance(attribute, UnregisteredAttr):
        for key, value in _FIELD.findall(attribute.value.data):
            if value.startswith("["):
                fields[key] = [int(v) for v in value.strip("[]").split(",") if v.strip()]
            else:
                fields[key] = int(value)
        return fields
    raise Unsupported(f"{op.name} attribute {name} = {attribute}")

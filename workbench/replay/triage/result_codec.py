"""Verdicts as plain data: what the results cache stores, and nothing that can run code.

An entry is JSON. Values of the result classes below become objects tagged with their class
name; enums, tuples, complex numbers and numpy scalars and arrays are tagged too. Reading one
back builds only these classes, with exactly their fields, and numpy values only of plain
(non-object) dtypes: a forged entry can at worst fail to decode, never run code (as a pickle
does on load).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
from enum import Enum
from typing import Any

import numpy as np


class DecodeError(ValueError):
    """The data is not a value this module writes."""


@functools.cache
def _classes() -> dict[str, type]:
    """The classes an entry may hold, by name (imported late: they import this package)."""
    from workbench.model import Source, Step
    from workbench.replay.bisect import Verdict
    from workbench.replay.judge.compare import (
        BoundCheck,
        Comparison,
        ErrorHistogram,
        Tolerance,
    )
    from workbench.replay.judge.culprit import Culprit, CulpritInstruction
    from workbench.replay.judge.noise.model import Discontinuity
    from workbench.replay.judge.outcome import Kind, Outcome
    from workbench.replay.steps import StepResult

    kinds: tuple[type, ...] = (Verdict, StepResult, Step, Comparison, Outcome, Tolerance,
                               BoundCheck, Discontinuity, Source, Kind, Culprit,
                               CulpritInstruction, ErrorHistogram)
    return {kind.__name__: kind for kind in kinds}


def _dtype(name: object) -> np.dtype:
    if not isinstance(name, str):
        raise DecodeError("a dtype is not named")
    try:
        dtype = np.dtype(name)
    except TypeError:
        import ml_dtypes  # bfloat16, float8_*: named by ml_dtypes, not numpy

        try:
            dtype = np.dtype(getattr(ml_dtypes, name))
        except (AttributeError, TypeError):
            raise DecodeError(f"unknown dtype {name!r}") from None
    if dtype.hasobject:
        raise DecodeError("object arrays are not data")
    return dtype


def to_data(value: Any) -> Any:
    """`value` as JSON-ready data; TypeError for a value of a class not listed above."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Enum):
        return {"$enum": type(value).__name__, "value": value.value}
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype.hasobject:
            raise TypeError("an object array cannot be stored")
        return {"$numpy": array.dtype.name, "scalar": isinstance(value, np.generic),
                "shape": list(array.shape),
                "bytes": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}
    if isinstance(value, complex):
        return {"$complex": [value.real, value.imag]}
    name = type(value).__name__
    cls = type(value)  # compared apart, so that `value` keeps its type
    if _classes().get(name) is cls:
        if hasattr(value, "_fields"):  # a NamedTuple
            fields = {field: to_data(getattr(value, field)) for field in value._fields}
        else:
            fields = {f.name: to_data(getattr(value, f.name))
                      for f in dataclasses.fields(value)}
        return {"$class": name, "fields": fields}
    if isinstance(value, tuple):
        return {"$tuple": [to_data(item) for item in value]}
    if isinstance(value, list):
        return [to_data(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"$dict": {key: to_data(item) for key, item in value.items()}}
    raise TypeError(f"a {name} cannot be stored")


def from_data(data: Any) -> Any:
    """The value `to_data` made `data` from; DecodeError for anything else."""
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [from_data(item) for item in data]
    if not isinstance(data, dict) or len(data) == 0:
        raise DecodeError("not a stored value")
    if "$tuple" in data:
        return tuple(from_data(item) for item in _list(data["$tuple"]))
    if "$dict" in data:
        items = data["$dict"]
        if not isinstance(items, dict):
            raise DecodeError("a dict that is not one")
        return {str(key): from_data(item) for key, item in items.items()}
    if "$complex" in data:
        real, imag = _list(data["$complex"], 2)
        return complex(float(real), float(imag))
    if "$numpy" in data:
        return _numpy(data)
    if "$enum" in data:
        kind = _classes().get(data["$enum"])
        if not (isinstance(kind, type) and issubclass(kind, Enum)):
            raise DecodeError(f"unknown enum {data['$enum']!r}")
        try:
            return kind(data.get("value"))
        except ValueError as error:
            raise DecodeError(str(error)) from None
    if "$class" in data:
        return _instance(data)
    raise DecodeError("not a stored value")


def _list(value: object, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise DecodeError("a list of the wrong shape")
    return value


def _numpy(data: dict) -> Any:
    dtype = _dtype(data["$numpy"])
    shape = tuple(_list(data.get("shape")))
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise DecodeError("a bad shape")
    try:
        raw = base64.b64decode(data.get("bytes", ""), validate=True)
    except (ValueError, TypeError):
        raise DecodeError("bad array bytes") from None
    if len(raw) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        raise DecodeError("array bytes do not fill its shape")
    array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return array[()] if data.get("scalar") and shape == () else array


def _instance(data: dict) -> Any:
    kind = _classes().get(data["$class"])
    if kind is None or issubclass(kind, Enum):
        raise DecodeError(f"unknown class {data['$class']!r}")
    fields = data.get("fields")
    if not isinstance(fields, dict):
        raise DecodeError("an object without fields")
    names = ({f.name for f in dataclasses.fields(kind)} if dataclasses.is_dataclass(kind)
             else set(kind._fields))  # type: ignore[attr-defined]  # a NamedTuple
    if set(fields) != names:
        raise DecodeError(f"a {kind.__name__} with other fields")
    try:
        return kind(**{name: from_data(value) for name, value in fields.items()})
    except TypeError as error:
        raise DecodeError(str(error)) from None


def dumps(value: Any) -> str:
    return json.dumps(to_data(value), separators=(",", ":"))


def loads(text: str) -> Any:
    try:
        return from_data(json.loads(text))
    except (ValueError, RecursionError) as error:  # DecodeError is a ValueError
        raise DecodeError(str(error)) from None

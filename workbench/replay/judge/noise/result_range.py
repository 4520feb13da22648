"""The samples' range of the result, reduced as each output arrives (`ResultRange`).

Low and high are kept in each output's storage type, rounded outward from the f64 sample so
the range only ever grows, with where any sample was NaN; narrower floats than f32 in f32: in
bf16 the range would be as coarse as the values it judges (an ulp each way), and a sample may
pass f16's or f8's largest finite value. Kept in f64 the range takes 17 bytes an element (7.7
GB for a GPT-2-small training step's result); kept so, 9.
The noisy interpreter hands each output over as soon as it is made (`Interpreter.output_sink`),
so no sample holds its whole result in f64 either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.hlo_ir import Shape
from workbench.replay.errors import Unsupported
from workbench.replay.hlo.dtypes import dtype_of


def range_dtype(shape: Shape) -> np.dtype | None:
    """The type the range of an output of array `shape` is kept in; None for what has no
    range (integers, predicates, what the evaluator cannot hold)."""
    element = shape.element_type
    try:
        dtype = dtype_of(element)
    except Unsupported:
        return None
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    if element == "f64":
        return dtype
    return np.dtype(np.float32) if element.startswith(("f", "bf")) else None


def result_bytes(shape: Shape) -> int:
    """Bytes the range of a result of `shape` keeps: low and high, and a NaN mask."""
    if shape.is_tuple:
        return sum(result_bytes(part) for part in shape.tuple_shapes)
    dtype = range_dtype(shape) if shape.is_array else None
    if dtype is None:
        return 0
    return (2 * dtype.itemsize + 1) * int(np.prod(shape.dims, dtype=np.int64))


BLOCK = 1 << 16  # elements reduced at a time (`hold_outward`)


@dataclass
class _Leaf:
    """One float output's range: low, high and where NaN was seen; None until a sample.
    `on_disk`: kept in files mapped read-write (`processes.memory.disk_array`)."""

    dtype: np.dtype
    on_disk: bool = False
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    nan_seen: np.ndarray | None = None

    def _made(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A zeroed array for the range, on disk if it should be and can be (and is large
        enough for a mapping to save anything: `memory.SMALLEST`)."""
        if self.on_disk:
            from workbench.replay.processes.memory import SMALLEST, disk_array

            if int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize >= SMALLEST:
                kept = disk_array(shape, np.dtype(dtype))
                if kept is not None:
                    return kept
        return np.zeros(shape, dtype)

    def add(self, value: Any, nans_legal: bool) -> None:
        value = np.asarray(value)
        if self.dtype.kind == "c":
            self._add_complex(value.astype(self.dtype, copy=False), nans_legal)
            return
        if self.low is None:  # its own arrays: later samples are reduced into them
            self.low = self._made(value.shape, self.dtype)
            self.high = self._made(value.shape, self.dtype)
            self.nan_seen = self._made(value.shape, bool)
            first = True
        else:
            first = False
        assert self.high is not None and self.nan_seen is not None
        hold_outward(self.low.reshape(-1), self.high.reshape(-1), value.reshape(-1), first,
                     self.nan_seen.reshape(-1) if nans_legal else None)

    def _add_complex(self, value: np.ndarray, nans_legal: bool) -> None:
        if self.low is None:
            self.low, self.high = value.copy(), value.copy()
            self.nan_seen = np.zeros(value.shape, bool)
        else:
            assert self.high is not None
            self.low, self.high = _fmin(self.low, value), _fmax(self.high, value)
        if nans_legal:
            assert self.nan_seen is not None
            self.nan_seen |= np.isnan(value)

    def merge(self, other: _Leaf) -> None:
        if other.low is None:
            return
        if self.low is None:
            self.low, self.high, self.nan_seen = other.low, other.high, other.nan_seen
            return
        assert self.high is not None and self.nan_seen is not None
        assert other.high is not None and other.nan_seen is not None
        with np.errstate(invalid="ignore"):
            self.low, self.high = _fmin(self.low, other.low), _fmax(self.high, other.high)
            self.nan_seen |= other.nan_seen


class ResultRange:
    """The range of a result of the declared `shape` over the samples added to it: a whole
    result (`add`, None where an output was handed over already) or one output of the root
    tuple as it is made (`add_output`). A sample whose NaNs are not legal ones (the split
    sample's) widens the range with its finite values only (`nans_legal` off). Ranges of the
    same shape merge (`merge`) into what one run of all their samples finds, in any order.
    `on_disk`: large outputs' ranges kept in files the system writes back (a range that
    would not fit beside the stage's evaluations: `budget.check_stage_memory`)."""

    def __init__(self, shape: Shape, on_disk: bool = False) -> None:
        self._tree = _tree(shape, on_disk)

    def add(self, value: Any, nans_legal: bool = True) -> None:
        _add(self._tree, value, nans_legal)

    def add_output(self, index: int, value: Any, nans_legal: bool = True) -> None:
        node = self._tree[index] if isinstance(self._tree, list) else self._tree
        _add(node, value, nans_legal)

    def merge(self, other: ResultRange) -> ResultRange:
        _merge(self._tree, other._tree)
        return self

    @property
    def low(self) -> Any:
        """Each output's low end, with the result's structure (None for non-float parts)."""
        return _pick(self._tree, "low")

    @property
    def high(self) -> Any:
        return _pick(self._tree, "high")

    @property
    def nan_seen(self) -> Any:
        return _pick(self._tree, "nan_seen")


def _tree(shape: Shape, on_disk: bool) -> Any:
    if shape.is_tuple:
        return [_tree(part, on_disk) for part in shape.tuple_shapes]
    dtype = range_dtype(shape) if shape.is_array else None
    return None if dtype is None else _Leaf(dtype, on_disk)


def _add(node: Any, value: Any, nans_legal: bool) -> None:
    if value is None or node is None:  # handed over already; or not a float output
        return
    if isinstance(node, list):
        if not isinstance(value, tuple) or len(value) != len(node):
            raise ValueError("the random-rounding result has another structure")
        for part, element in zip(node, value, strict=True):
            _add(part, element, nans_legal)
        return
    node.add(value, nans_legal)


def _merge(node: Any, other: Any) -> None:
    if isinstance(node, list):
        for part, more in zip(node, other, strict=True):
            _merge(part, more)
    elif node is not None:
        node.merge(other)


def _pick(node: Any, field: str) -> Any:
    if isinstance(node, list):
        return tuple(_pick(part, field) for part in node)
    return None if node is None else getattr(node, field)


def hold_outward(lows: np.ndarray, highs: np.ndarray, flat: np.ndarray, first: bool,
                 nans: np.ndarray | None = None) -> None:
    """The flat range `lows`, `highs` widened in place to hold the flat sample `flat` rounded
    outward into their type (`outward_pair`; with `first`, set to it), and `nans` set where
    the sample is NaN if given. In blocks that stay in the cache: the temporaries of a whole
    large array (an f64 copy among them) are fresh pages each time, and touching them costs
    more than the arithmetic."""
    with np.errstate(invalid="ignore", over="ignore"):
        for start in range(0, flat.size, BLOCK):
            part, end = flat[start:start + BLOCK], start + BLOCK
            low, high = outward_pair(part, lows.dtype)
            if first:
                lows[start:end], highs[start:end] = low, high
            else:
                np.fmin(lows[start:end], low, out=lows[start:end])
                np.fmax(highs[start:end], high, out=highs[start:end])
            if nans is not None:
                seen = np.isnan(part)
                if seen.any():  # else unwritten: a mask on disk is not written back
                    nans[start:end] |= seen


def outward_pair(value: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """`value` in `dtype` rounded toward -inf and toward +inf (`value` itself when it is of
    `dtype`): never inside the f64 value, so a range kept in it holds every sample. One
    conversion, then a step of one ulp where it rounded the other way."""
    if value.dtype == dtype:
        return value, value
    with np.errstate(over="ignore", invalid="ignore"):  # beyond its largest: infinite
        high = value.astype(dtype)
        back = high.astype(value.dtype)
        low = np.negative(high, out=np.empty_like(high))  # down is up on the negation
        _step_up(low, back > value)
        np.negative(low, out=low)
        _step_up(high, back < value)
    return low, high


def _step_up(x: np.ndarray, where: np.ndarray) -> None:
    """`x` moved one ulp toward +inf where `where` is set, in place: on f32's bits, one more
    for a positive value and one less for a negative one (-0 first made +0); `nextafter`
    for other types (it calls libm once an element)."""
    if x.dtype != np.float32:
        np.nextafter(x, np.array(np.inf, x.dtype), where=where, out=x)
        return
    x += np.float32(0)  # -0 + 0 is +0, whose next value up is the smallest subnormal
    bits = x.view(np.int32)
    bits += ((bits >> 31) | 1) * where.astype(np.int32)


def _fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _picked(a, b, np.fmin)


def _fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _picked(a, b, np.fmax)


def _picked(a: np.ndarray, b: np.ndarray, pick: Any) -> np.ndarray:
    """`pick` (np.fmin or np.fmax) of `a` and `b`, into `a` where it can; of each part of a
    complex value (NaN skipped as for reals)."""
    if a.dtype.kind == "c":
        return pick(a.real, b.real) + 1j * pick(a.imag, b.imag)
    if a.flags.writeable and a.flags.owndata and a.shape == b.shape:
        return pick(a, b, out=a)
    return pick(a, b)

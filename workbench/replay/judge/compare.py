"""Tolerant comparison of an expected and an actual literal (arrays and nested tuples).

Two results of the same program rarely agree bit for bit once passes reorder arithmetic
(fusion, algebraic simplification, reassociated reductions) or the compiled code uses its own
approximations of `exp` and `tanh`. So a comparison is explicit about its tolerance, which
depends on the element type, and says how far apart the results are, not just whether they are.

An element passes when `|actual - expected| <= atol + rtol * |expected|` (numpy's `isclose`
rule; the expected side sets the scale). NaN matches NaN; an infinity matches only the same
infinity. Integers and pred compare exactly unless a tolerance is given explicitly.

Given a `Truth` (the expected result computed in higher precision, and a bound per element;
see `error_bound.py`), a float element beyond the tolerance still passes when it is within
its bound of the truth: the tolerance is then a floor, and `Comparison.bound` records the
element nearest to (or furthest beyond) its bound.

Default tolerances (`DEFAULT_TOLERANCES`, by numpy dtype name):

| element type | atol | rtol |
|---|---|---|
| f64, c128 | 1e-9 | 1e-7 |
| f32, c64 | 1e-5 | 1e-4 |
| f16 | 1e-3 | 1e-2 |
| bf16 | 1e-2 | 5e-2 |
| f8 and f4 types | 2 eps | 2 eps (eps: the type's machine epsilon, e.g. 0.25 for f8e4m3fn) |
| integers, pred | 0 | 0 (exact) |

The relative error reported is `|actual - expected| / |expected|` over the elements whose
expected value is non-zero and finite; elements expected to be zero count only towards the
absolute error.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from workbench.hlo_ir import ARRAY_TYPES, LiteralValue, numpy_dtype

if TYPE_CHECKING:
    from workbench.replay.judge.noise.model import Discontinuity


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    def __str__(self) -> str:
        return f"atol {self.atol:g}, rtol {self.rtol:g}"


DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(1e-9, 1e-7),
    "complex128": Tolerance(1e-9, 1e-7),
    "float32": Tolerance(1e-5, 1e-4),
    "complex64": Tolerance(1e-5, 1e-4),
    "float16": Tolerance(1e-3, 1e-2),
    "bfloat16": Tolerance(1e-2, 5e-2),
}

EXACT = Tolerance(0.0, 0.0)


def dtype_category(dtype: np.dtype) -> str:
    """"bool", "int", "float" or "complex" (ml_dtypes' types have numpy kind "V")."""
    if dtype == np.bool_:
        return "bool"
    if dtype.kind == "c":
        return "complex"
    if dtype.kind in "iu":
        return "int"
    import ml_dtypes

    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return "int"
    return "float"


def default_tolerance(dtype: np.dtype) -> Tolerance:
    """The documented default tolerance for `dtype` (see the module docstring)."""
    dtype = np.dtype(dtype)
    known = DEFAULT_TOLERANCES.get(dtype.name)
    if known is not None:
        return known
    if dtype_category(dtype) == "float":
        import ml_dtypes

        eps = float(ml_dtypes.finfo(dtype).eps)
        return Tolerance(2 * eps, 2 * eps)
    return EXACT


@cache
def _hlo_type_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for element_type in ARRAY_TYPES:
        try:
            names.setdefault(numpy_dtype(element_type).name, element_type)
        except ValueError:
            continue
    return names


def describe_array(value: Any) -> str:
    """`f32[4,8]`-style description of a literal, or `(f32[4], s32[])` for a tuple."""
    if isinstance(value, tuple):
        return "(" + ", ".join(describe_array(v) for v in value) + ")"
    array = np.asarray(value)
    return describe_type(array.dtype, array.shape)


def describe_type(dtype: np.dtype, dims: tuple[int, ...]) -> str:
    """`f32[4,8]`: HLO's spelling of an array type."""
    name = _hlo_type_names().get(np.dtype(dtype).name, np.dtype(dtype).name)
    return f"{name}[{','.join(str(d) for d in dims)}]"


def _scalar(value: Any) -> float | int | bool | complex:
    """A Python number for JSON and messages (ml_dtypes scalars are not JSON-friendly)."""
    item = value.item() if hasattr(value, "item") else value
    if isinstance(item, (bool, int, float, complex)):
        return item
    return float(item)


@dataclass
class Comparison:
    """How an actual literal differs from the expected one.

    `problem` is set when the two cannot be compared element by element (shape, dtype or tuple
    structure differ); the counts are then 0. `first_element` is the tuple path of the first
    mismatching array (() for a plain array) and `first_index` the index inside it.
    """

    ok: bool
    total: int = 0
    mismatches: int = 0
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    first_element: tuple[int, ...] = ()
    first_index: tuple[int, ...] | None = None
    expected_value: Any = None
    actual_value: Any = None
    problem: str | None = None
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    bound: BoundCheck | None = None  # set when elements beyond the tolerance met the bound
    shadow_problem: str | None = None  # why no bound could be had (judged by tolerance only)
    noise_problem: str | None = None  # why rounding noise inside the program was not modelled
    noise_left_out: str | None = None  # what the noise stage left out, where it mattered
    # Elements beyond the tolerance within their bound only because it has no end: a
    # random-rounding sample passed the largest finite value there (`error_bound._noisy`).
    unbounded: int = 0
    # Outputs of a non-unique factorization judged by its relations (`factorizations.py`)
    relations: str | None = None
    # Where rounding noise inside the program decided values, when the bound that judged
    # some output had to include it (the noise stage; `judge/noise/`).
    widened_by: tuple[Discontinuity, ...] = ()
    allowance: str | None = None  # the platform's legal rounding judged with ("TF32")
    # How far the elements of the outputs that mismatch are off (a report's histogram).
    errors: ErrorHistogram | None = None

    @property
    def location(self) -> str:
        """`{1}[2,3]`: the tuple path, then the index of the first mismatch."""
        return where_text(self.first_element, self.first_index)

    @property
    def tolerance_text(self) -> str:
        values = sorted(set(self.tolerances.values()), key=lambda t: (t.atol, t.rtol))
        return "; ".join(str(t) for t in values) or "exact"

    @property
    def judged_by(self) -> str:
        """"error bound" when the rounding error bound decided, else "tolerance"."""
        return "tolerance" if self.bound is None else "error bound"

    @property
    def summary(self) -> str:
        """One line a user can read: the verdict, how far off, the bound, and where."""
        return comparison_text(self)


@dataclass(frozen=True)
class ErrorHistogram:
    """How many elements are off by how much, by power of ten, over the outputs that
    mismatch: what a report plots at the culprit (the comparison keeps no arrays).

    `decades` pairs k with the count of elements whose |actual - expected| lies in
    [10^k, 10^(k+1)); `exact` counts elements with no error, `not_finite` those whose error
    cannot be measured (a NaN or an infinity on one side only)."""

    decades: tuple[tuple[int, int], ...] = ()
    exact: int = 0
    not_finite: int = 0

    def plus(self, other: ErrorHistogram) -> ErrorHistogram:
        counts = dict(self.decades)
        for decade, count in other.decades:
            counts[decade] = counts.get(decade, 0) + count
        return ErrorHistogram(tuple(sorted(counts.items())), self.exact + other.exact,
                              self.not_finite + other.not_finite)


def error_histogram(abs_error: np.ndarray) -> ErrorHistogram:
    """The histogram of an array of |actual - expected| (inf where not measurable)."""
    finite = np.isfinite(abs_error)
    positive = abs_error[finite & (abs_error > 0)]
    with np.errstate(divide="ignore"):
        decades = np.floor(np.log10(positive)).astype(np.int64)
    values, counts = np.unique(decades, return_counts=True)
    return ErrorHistogram(tuple((int(v), int(c)) for v, c in zip(values, counts, strict=True)),
                          exact=int(np.count_nonzero(finite & (abs_error == 0))),
                          not_finite=int(np.count_nonzero(~finite)))


@dataclass
class BoundCheck:
    """The element that came closest to (or went furthest beyond) its rounding error bound.

    `error` is |actual - truth| there (truth: the higher-precision evaluation of the
    reference), `bound` how far rounding in the program's precision can move it, `ratio`
    error / bound; `reference` is the strictly rounded reference's value there.
    """

    element: tuple[int, ...]
    index: tuple[int, ...]
    error: float
    bound: float
    truth: Any
    actual: Any
    reference: Any
    widened_by: tuple[Discontinuity, ...] = ()  # where noise decided values (noise stage)

    @property
    def ratio(self) -> float:
        return self.error / self.bound if self.bound > 0 else math.inf


@dataclass(frozen=True)
class Truth:
    """What judging by a bound needs: the higher-precision result and the per-element bound,
    both with the structure of the result (None for integer and pred arrays).
    `widened_by` names where rounding noise inside the program widened the bound;
    `legal_nan` (boolean arrays, or None) where rounding may legally make a NaN;
    `noise_left_out` what the noise stage could not cover (`Noise.left_out`)."""

    value: Any
    bound: Any
    widened_by: tuple[Discontinuity, ...] = ()
    legal_nan: Any = None
    noise_left_out: str | None = None

    def at(self, path: tuple[int, ...]) -> Truth:
        """The part for the output at tuple path `path`."""
        value, bound, legal_nan = self.value, self.bound, self.legal_nan
        for index in path:
            value, bound = value[index], None if bound is None else bound[index]
            legal_nan = None if legal_nan is None else legal_nan[index]
        return Truth(value, bound, self.widened_by, legal_nan, self.noise_left_out)


# A stage of the bound: False (the reference's own rounding), True (and the conditioning on
# perturbed inputs), NOISE (and rounding noise inside the program, discontinuities included).
Stage = bool | str
NOISE = "noise"


class TruthSource(Protocol):
    """Truths made on demand, in stages of growing bounds (each contains the one before):
    a comparison asks for them only when an element is beyond the tolerance."""

    def stages(self) -> Sequence[Stage]:
        """The stages to try, in order."""
        ...

    def truth(self, conditioning: Stage) -> Truth | None:
        """The truth of a stage; None when there is none (`problem` says why)."""
        ...

    @property
    def problem(self) -> str | None: ...


@dataclass(frozen=True)
class Given:
    """A truth known in advance, as a one-stage source."""

    known: Truth
    problem: str | None = None

    def stages(self) -> Sequence[Stage]:
        return (True,)

    def truth(self, conditioning: Stage) -> Truth | None:
        return self.known


def compare(expected: LiteralValue, actual: LiteralValue, atol: float | None = None,
            rtol: float | None = None, truth: Truth | TruthSource | None = None) -> Comparison:
    """Compare two literals element by element; `atol`/`rtol` override the per-dtype defaults.

    Giving only one of them keeps the default of the other. With `truth`, a float element
    beyond the tolerance still passes when it is within its bound of the truth
    (`error_bound.py`): the tolerance is a floor, the bound the rule.
    """
    result = Comparison(ok=True)
    source = Given(truth) if isinstance(truth, Truth) else truth
    _compare_into(result, expected, actual, atol, rtol, (), source)
    return result


def results_equal(a: LiteralValue, b: LiteralValue) -> bool:
    """Bitwise-level equality (NaN equals NaN, -0.0 equals 0.0): did a result change at all?"""
    return compare(a, b, atol=0.0, rtol=0.0).ok


def _compare_into(result: Comparison, expected: Any, actual: Any, atol: float | None,
                  rtol: float | None, path: tuple[int, ...],
                  truth: TruthSource | None) -> None:
    if result.problem is not None:
        return
    if isinstance(expected, tuple) or isinstance(actual, tuple):
        if not (isinstance(expected, tuple) and isinstance(actual, tuple)) or len(
            expected
        ) != len(actual):
            _set_problem(result, path, f"structure mismatch: expected {describe_array(expected)}, "
                                       f"actual {describe_array(actual)}")
            return
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _compare_into(result, e, a, atol, rtol, (*path, index), truth)
        return
    _compare_arrays(result, np.asarray(expected), np.asarray(actual), atol, rtol, path, truth)


# Elements compared at a time: the temporaries of a whole model-size array are fresh pages
# each, and touching them costs more than the arithmetic (4x at 38 million elements).
BLOCK = 1 << 16


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit the same array (same dtype and shape); a block at a time (`BLOCK`)."""
    if a is b:
        return True
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.nbytes <= 4096:  # small: comparing the bytes costs less than numpy's call overhead
        return a.tobytes() == b.tobytes()
    size = a.dtype.itemsize
    kind = f"u{size}" if size in (1, 2, 4, 8) else None
    flat_a = (a.view(kind) if kind else np.ascontiguousarray(a).view("u1")).reshape(-1)
    flat_b = (b.view(kind) if kind else np.ascontiguousarray(b).view("u1")).reshape(-1)
    return all(np.array_equal(flat_a[start:start + BLOCK], flat_b[start:start + BLOCK])
               for start in range(0, flat_a.size, BLOCK))  # the first difference ends it


def digest(value: LiteralValue) -> bytes:
    """A digest of a literal's structure, types, shapes and bits: two results with the same
    digest are the same result, and compare the same (SHA-256, about 2 GB a second here)."""
    hasher = hashlib.sha256()
    _digest_into(hasher, value)
    return hasher.digest()


def _digest_into(hasher: Any, value: Any) -> None:
    if isinstance(value, tuple):
        hasher.update(b"(%d" % len(value))
        for part in value:
            _digest_into(hasher, part)
        hasher.update(b")")
        return
    array = np.asarray(value)
    hasher.update(f"{array.dtype.str}{array.dtype.name}{array.shape}".encode())
    hasher.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8))


def _set_problem(result: Comparison, path: tuple[int, ...], problem: str) -> None:
    result.ok = False
    result.problem = problem
    result.first_element = path
    result.first_index = None
    result.total = result.mismatches = 0


def _compare_arrays(result: Comparison, expected: np.ndarray, actual: np.ndarray,
                    atol: float | None, rtol: float | None, path: tuple[int, ...],
                    truth: TruthSource | None) -> None:
    if expected.shape != actual.shape:
        _set_problem(result, path, f"shape mismatch: expected {describe_array(expected)}, "
                                   f"actual {describe_array(actual)}")
        return
    if expected.dtype != actual.dtype:
        _set_problem(result, path, f"dtype mismatch: expected {describe_array(expected)}, "
                                   f"actual {describe_array(actual)}")
        return
    default = default_tolerance(expected.dtype)
    tolerance = Tolerance(default.atol if atol is None else atol,
                          default.rtol if rtol is None else rtol)
    result.tolerances[_hlo_type_names().get(expected.dtype.name, expected.dtype.name)] = tolerance
    if same_bits(expected, actual):  # an unchanged value: no error to measure, one cheap pass
        result.total += int(expected.size)
        return
    category = dtype_category(expected.dtype)
    if category == "bool" or (category == "int" and tolerance == EXACT):
        mismatch = expected != actual
        if category == "bool":
            abs_error, scale = mismatch.astype(np.float64), np.ones(expected.shape)
        else:
            abs_error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
            scale = np.abs(expected.astype(np.float64))
        measured = _Measured.of(abs_error, scale)
    else:
        mismatch, measured = _inexact(expected, actual, tolerance, category)
        if truth is not None and np.any(mismatch):
            mismatch = _judge_by_bound(result, expected, actual, mismatch, truth, path)
    result.total += int(expected.size)
    count = int(np.count_nonzero(mismatch))
    if measured.unmeasurable and np.any(mismatch.reshape(-1) & measured.unmeasurable_at()):
        result.max_abs_error = math.inf
        result.max_rel_error = math.inf
    result.max_abs_error = max(result.max_abs_error, measured.max_abs)
    result.max_rel_error = max(result.max_rel_error, measured.max_rel)
    if count and result.ok:
        flat = int(np.flatnonzero(mismatch)[0])
        index = tuple(int(i) for i in np.unravel_index(flat, expected.shape))
        result.first_element = path
        result.first_index = index
        result.expected_value = _scalar(expected[index])
        result.actual_value = _scalar(actual[index])
    if count:
        result.ok = False
        result.mismatches += count
        histogram = measured.histogram()
        result.errors = histogram if result.errors is None else result.errors.plus(histogram)


@dataclass
class _Measured:
    """How far apart an array pair is beside its mismatches: the largest distance and
    relative distance (0.0 when none is measurable), whether some element's distance cannot
    be measured (a NaN or an infinity on one side), and, on demand, where (`unmeasurable_at`)
    and the histogram of the distances (`histogram`): made again a block at a time, as only
    an output that mismatches needs them."""

    max_abs: float = 0.0
    max_rel: float = 0.0
    unmeasurable: bool = False
    # The |actual - expected| blocks, in order, made again at each call
    distances: Callable[[], Iterator[np.ndarray]] = lambda: iter(())

    @staticmethod
    def of(abs_error: np.ndarray, scale: np.ndarray) -> _Measured:
        """From whole arrays of distances (`inf` where not measurable) and scales."""
        measured = _Measured(distances=lambda: iter((abs_error.reshape(-1),)))
        measured.add(abs_error, scale)
        return measured

    def add(self, abs_error: np.ndarray, scale: np.ndarray) -> None:
        """Take in a block's distances and scales."""
        measurable = np.isfinite(abs_error)
        if not measurable.all():
            self.unmeasurable = True
        if not np.any(measurable):
            return
        self.max_abs = max(self.max_abs, float(abs_error[measurable].max()))
        relative = measurable & (scale != 0) & np.isfinite(scale)
        if np.any(relative):
            with np.errstate(over="ignore"):  # a huge error over a subnormal: inf
                ratio = abs_error[relative] / scale[relative]
            self.max_rel = max(self.max_rel, float(ratio.max()))

    def unmeasurable_at(self) -> np.ndarray:
        """Where the distance cannot be measured, as a flat mask."""
        return np.concatenate([np.zeros(0, dtype=bool),
                               *(~np.isfinite(block) for block in self.distances())])

    def histogram(self) -> ErrorHistogram:
        histogram = ErrorHistogram()
        for block in self.distances():
            histogram = histogram.plus(error_histogram(block))
        return histogram


def _inexact(expected: np.ndarray, actual: np.ndarray, tolerance: Tolerance,
             category: str) -> tuple[np.ndarray, _Measured]:
    """The mismatch mask and how far apart the arrays are, a block at a time (`BLOCK`): no
    temporary of a whole model-size output."""
    mismatch = np.empty(expected.shape, dtype=bool)
    flat_expected, flat_actual = expected.reshape(-1), actual.reshape(-1)
    flat_mismatch = mismatch.reshape(-1)

    def distances() -> Iterator[np.ndarray]:
        for start in range(0, expected.size, BLOCK):
            part = slice(start, start + BLOCK)
            yield _inexact_block(flat_expected[part], flat_actual[part], tolerance, category)[1]

    measured = _Measured(distances=distances)
    for start in range(0, expected.size, BLOCK):
        part = slice(start, start + BLOCK)
        flat_mismatch[part], abs_error, scale = _inexact_block(
            flat_expected[part], flat_actual[part], tolerance, category)
        measured.add(abs_error, scale)
    return mismatch, measured


def _inexact_block(expected: np.ndarray, actual: np.ndarray, tolerance: Tolerance,
                   category: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block's mismatch mask, |actual - expected| (inf where not measurable: a NaN or an
    infinity on one side; 0.0 where both are the same NaN or infinity) and |expected|."""
    wide = np.complex128 if category == "complex" else np.float64
    e = expected.astype(wide)
    a = actual.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        abs_error = np.abs(a - e)
        scale = np.abs(e)
        within = abs_error <= tolerance.atol + tolerance.rtol * scale
        if np.isfinite(abs_error).all():  # both sides finite everywhere: the common case
            return ~within, abs_error, scale
        e_nan, a_nan = np.isnan(e), np.isnan(a)
        e_finite, a_finite = np.isfinite(e), np.isfinite(a)
        same_special = (e_nan & a_nan) | (~e_nan & ~a_nan & ~e_finite & (e == a))
        passes = same_special | (e_finite & a_finite & within)
        # Only finite pairs have a meaningful distance; the others show up as inf.
        abs_error = np.where(e_finite & a_finite, abs_error, np.where(passes, 0.0, np.inf))
    return ~passes, abs_error, scale


def _judge_by_bound(result: Comparison, expected: np.ndarray, actual: np.ndarray,
                    beyond_tolerance: np.ndarray, source: TruthSource,
                    path: tuple[int, ...]) -> np.ndarray:
    """The elements beyond the tolerance that are beyond their bound too, at the first stage
    of the source that passes them all, or else its last; records the worst element."""
    check: BoundCheck | None = None
    still = beyond_tolerance
    unbounded = 0
    for stage in source.stages():
        truth = source.truth(stage)
        if truth is None:
            if stage == NOISE and check is not None:  # the bound without the noise stands
                result.noise_problem = source.problem
                break
            result.shadow_problem = source.problem
            return beyond_tolerance
        part = truth.at(path)
        if part.bound is None:
            return beyond_tolerance
        check, still, unbounded = _within_bound(expected, actual, beyond_tolerance, part,
                                                path)
        if not np.any(still):
            break
    assert check is not None
    result.unbounded += unbounded
    if np.any(still) and part.noise_left_out:  # a mismatch the noise stage may not explain
        result.noise_left_out = part.noise_left_out
    if check.widened_by is not result.widened_by:  # in order, once each (hashed: a step
        # names hundreds of them, for each of its hundreds of outputs)
        result.widened_by = tuple(dict.fromkeys((*result.widened_by, *check.widened_by)))
    if result.bound is None or check.ratio > result.bound.ratio:
        result.bound = check
    return still


def _within_bound(expected: np.ndarray, actual: np.ndarray, beyond_tolerance: np.ndarray,
                  truth: Truth, path: tuple[int, ...]) -> tuple[BoundCheck, np.ndarray, int]:
    """The worst element (largest error / bound) among those beyond the tolerance (one at
    least), which of them are beyond their bound of the truth too, and how many are within
    it only because it has no end (`Comparison.unbounded`). Computed at those elements only:
    a model's step has hundreds of millions, and those within the tolerance need no bound."""
    shape = actual.shape
    positions = np.flatnonzero(beyond_tolerance)
    assert positions.size, "judged by the bound: some element is beyond the tolerance"
    at = np.unravel_index(positions, shape) if shape else (positions,)

    def taken(array: Any) -> np.ndarray:
        whole = np.broadcast_to(np.asarray(array), shape)
        return (whole if shape else whole.reshape(1))[at]

    wide = np.complex128 if actual.dtype.kind == "c" else np.float64
    value, bound, now = taken(truth.value), taken(truth.bound).astype(np.float64), taken(actual)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(now.astype(wide) - value)
        error = np.where(np.isfinite(error), error, np.inf)  # NaN or infinity: no distance
        undefined = np.isnan(now)  # beyond any bound, unless legal
        if truth.legal_nan is not None:
            legal = taken(truth.legal_nan)
            error = np.where(undefined & legal, 0.0, error)
            undefined &= ~legal
        beyond = ~(error <= bound) | undefined
        ratio = np.asarray(error / np.maximum(bound, np.finfo(np.float64).tiny))
    endless = np.isinf(bound)
    unbounded = 0
    if endless.any():  # a sample passed the largest finite value: every number is within
        ratio[endless] = np.where(undefined[endless], np.inf, 0.0)  # and a NaN beyond
        unbounded = int(np.count_nonzero(endless & ~beyond))
    still = np.zeros(shape, dtype=bool)
    still.reshape(-1)[positions] = beyond
    k = int(np.argmax(ratio))
    worst = np.unravel_index(int(positions[k]), shape)
    check = BoundCheck(path, tuple(int(i) for i in worst), float(error[k]), float(bound[k]),
                       _scalar(value[k]), _scalar(now[k]), _scalar(expected[worst]),
                       truth.widened_by)
    return check, still, unbounded


# ------------------------------------------------------------------------------ words
# A comparison in English, for people (`Comparison.summary`, outcomes, verdicts).


def where_text(element: tuple[int, ...], index: tuple[int, ...] | None) -> str:
    """`{1}[2,3]`: the tuple path of an output, then the index inside it."""
    path = "".join(f"{{{i}}}" for i in element)
    if index is None:
        return path
    return path + "[" + ",".join(str(i) for i in index) + "]"


def bound_text(bound: BoundCheck) -> str:
    """The element nearest to (or furthest beyond) its rounding error bound, with numbers."""
    where = where_text(bound.element, bound.index)
    relation = (f"<= bound {bound.bound:.3g}" if bound.error <= bound.bound
                else f"> bound {bound.bound:.3g}, {bound.ratio:.3g}x")
    return (f"worst at {where}: error {bound.error:.3g} {relation} (higher-precision value "
            f"{bound.truth!r}, actual {bound.actual!r})")


def noise_text(comparison: Comparison) -> str:
    """Where rounding noise inside the program widened the bound, and what the noise stage
    left out where that may matter ("" when nothing)."""
    found = comparison.widened_by
    left_out = f"; {comparison.noise_left_out}" if comparison.noise_left_out else ""
    if comparison.unbounded:
        left_out += (f"; {comparison.unbounded} element(s) have no bound: the program "
                     "amplifies its rounding there past the largest finite value")
    if not found:
        problem = comparison.noise_problem
        return f"; no noise stage: {problem}" if problem and not comparison.ok else left_out
    listed = ", ".join(str(d) for d in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return (f"; the bound includes rounding noise inside the program, which decides values "
            f"at {listed}{more}{left_out}")


def comparison_text(comparison: Comparison) -> str:
    """The verdict of one comparison, how far off, the bound, where, the platform's rounding
    the bound allowed for (`gpu_numerics.py`), and the noise that widened it."""
    text = _verdict_text(comparison)
    if comparison.allowance:
        verdict = "within" if comparison.ok else "beyond"
        text += f" ({verdict} {comparison.allowance} rounding of the reference)"
    if comparison.relations:
        text += f"; {comparison.relations}"
    return text + noise_text(comparison)


def _verdict_text(comparison: Comparison) -> str:
    c = comparison
    if c.problem is not None:
        where = where_text(c.first_element, c.first_index)
        return c.problem + (f" at {where}" if where else "")
    errors = f"max abs {c.max_abs_error:.3g}, max rel {c.max_rel_error:.3g}"
    tolerance = c.tolerance_text
    if c.ok:
        if c.bound is None:
            return f"ok: {c.total} elements within {tolerance} ({errors})"
        return (f"ok: {c.total} elements within {tolerance} or within the rounding error "
                f"bound ({errors}; {bound_text(c.bound)})")
    first = (f"first at {where_text(c.first_element, c.first_index)}: "
             f"expected {c.expected_value!r}, actual {c.actual_value!r}")
    if c.bound is None:
        why = f"; no rounding error bound: {c.shadow_problem}" if c.shadow_problem else ""
        return (f"mismatch: {c.mismatches} of {c.total} elements differ beyond {tolerance} "
                f"({errors}); {first}{why}")
    return (f"mismatch: {c.mismatches} of {c.total} elements differ beyond {tolerance} and "
            f"beyond the rounding error bound ({errors}); {first}; {bound_text(c.bound)}")

"""How far legal rounding can move each element of a result: the bound a verdict judges by.

A compiler may change rounding without changing the program: XLA computes bf16 ops in f32 and
keeps f32 across them (float normalization, excess precision), rewrites `sqrt`/`divide` into
`rsqrt`/`multiply`, fuses multiply-adds and reorders sums. The evaluator's strictly rounded
reference is one legal answer among many, so a step is judged against the *truth*, the
reference evaluated with every float type computed in f64 (c128 for complex; the "shadow"),
with a bound per element:

    bound = C * spread + absolute + U * eps * |truth|

- `spread` = max(|strict - truth|, |perturbed - truth|): how far the program's own rounding
  moved the strictly rounded reference, and how far the truth moves when every float input
  is perturbed by `PERTURB_ULPS` ulps of its type (ill-conditioning: cancellation, a nearly
  singular matrix, would amplify any legal difference in the last bits the same way);
- an absolute term, the largest spread among the elements of about this one's magnitude or
  less (`_absolute`): rounding errors of a cancellation show at elements near zero, where a
  relative measure would call them huge, and an element of 0.5 is not judged by the
  rounding of an element of 3,000 in the same array. That holds where an element's rounding
  is its own; a factorization's (LAPACK, `cholesky`, `triangular-solve`) is norm-wise, so
  an output such an op makes takes its array's largest spread at every element: a small
  entry of a Schur form carries the rounding of the large ones;
- `U` ulps of the output type at the truth's magnitude: rounding the result itself.

The fixed per-dtype tolerances of `compare.py` stay a floor: an element within them passes
without a bound, so nothing that passed before fails now. Integers and pred are exact.
Everything here is deterministic (the perturbation is a fixed pattern).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.hlo_ir import LiteralValue
from workbench.replay.judge.compare import BLOCK, Truth, dtype_category

if TYPE_CHECKING:
    from workbench.replay.judge.noise.model import Noise

C = 4.0  # how much further than the strict reference a legal result may stray
U = 4.0  # ulps of the output type at the truth's magnitude
PERTURB_ULPS = 2.0  # the input perturbation, in ulps of each input's type
SMALLEST = 64  # the absolute term's floor: the largest spread among this share of the array


def _eps(dtype: np.dtype) -> float:
    import ml_dtypes

    base = np.dtype(np.float64 if dtype.kind == "c" and dtype.itemsize == 16
                    else np.float32 if dtype.kind == "c" else dtype)
    return float(ml_dtypes.finfo(base).eps)


def _inexact(array: np.ndarray) -> bool:
    return dtype_category(array.dtype) in ("float", "complex")


def widen(value: LiteralValue) -> LiteralValue:
    """The value with every float array in f64 and every complex one in c128 (the shadow's
    argument types); integer and pred arrays, and arrays already that wide, unchanged (not
    copied)."""
    if isinstance(value, tuple):
        return tuple(widen(part) for part in value)
    array = np.asarray(value)
    if not _inexact(array):
        return array
    return array.astype(np.complex128 if array.dtype.kind == "c" else np.float64, copy=False)


def perturb(arguments: Sequence[LiteralValue],
            keep: Callable[[LiteralValue], LiteralValue] | None = None) -> list[LiteralValue]:
    """The widened arguments with each float element moved by +-`PERTURB_ULPS` ulps of its own
    type, by a fixed pattern (the same on every machine and run). `keep` takes each argument
    as it is made (to move it to disk: `replay/spill.py`), so they need not all be in memory
    at once."""
    rng = np.random.default_rng(20240917)

    def one(value: LiteralValue) -> LiteralValue:
        if isinstance(value, tuple):
            return tuple(one(part) for part in value)
        array = np.asarray(value)
        if not _inexact(array):
            return array
        step = PERTURB_ULPS * _eps(array.dtype)
        # Each element's sign drawn as `rng.choice([-1, 1])` draws it (an index 0 or 1),
        # without building the array of signs.
        factors = np.array([1.0 - step, 1.0 + step])
        return widen(array) * factors.take(rng.integers(0, 2, size=array.shape))

    return [one(argument) if keep is None else keep(one(argument)) for argument in arguments]


def truth_of(strict: LiteralValue, shadow: LiteralValue, perturbed: LiteralValue,
             normwise: Any = False, keep: Callable[[Any], Any] | None = None) -> Truth:
    """The truth (the shadow) and the bound of every element of the strict reference's
    structure. `normwise` (a bool, or one per output in the result's structure) marks the
    outputs a norm-wise accurate op makes (`hlo.linalg.normwise_outputs`): their absolute
    term is their array's largest spread. `keep` takes each bound array as it is made (to
    move it to disk: `replay/spill.py`). Raises ValueError when the shadow's structure is
    not the reference's."""
    return Truth(_values(strict, shadow),
                 _bounds(strict, shadow, perturbed, normwise, keep or (lambda bound: bound)))


def _values(strict: Any, shadow: Any) -> Any:
    if isinstance(strict, tuple):
        if not isinstance(shadow, tuple) or len(shadow) != len(strict):
            raise ValueError("the higher-precision result has another structure")
        return tuple(_values(s, t) for s, t in zip(strict, shadow, strict=True))
    return np.asarray(shadow)


def _bounds(strict: Any, shadow: Any, perturbed: Any, normwise: Any,
            keep: Callable[[Any], Any]) -> Any:
    if isinstance(strict, tuple):
        if not isinstance(perturbed, tuple) or len(perturbed) != len(strict):
            raise ValueError("the perturbed result has another structure")
        flags = normwise if isinstance(normwise, tuple) else (normwise,) * len(strict)
        return tuple(_bounds(s, t, p, n, keep) for s, t, p, n in zip(strict, shadow, perturbed,
                                                                     flags, strict=True))
    reference = np.asarray(strict)
    truth, moved = np.asarray(shadow), np.asarray(perturbed)
    if not _inexact(reference):
        return None
    if truth.shape != reference.shape or moved.shape != reference.shape:
        raise ValueError(f"the higher-precision result has shape {truth.shape}, the "
                         f"reference {reference.shape}")
    # A block at a time (`BLOCK`), in two passes: the absolute term's statistics over the
    # whole array, then each element's bound. A model's output has tens of millions of
    # elements, and whole-array temporaries are fresh pages each.
    wide = np.dtype(np.complex128 if reference.dtype.kind == "c" else np.float64)
    flat = [array.reshape(-1) for array in (reference, truth, moved)]
    n = reference.size

    def blocks() -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        for begin in range(0, n, BLOCK):
            part = slice(begin, begin + BLOCK)
            yield (part, *_spread_and_magnitude(flat[0][part], flat[1][part], flat[2][part],
                                                wide))

    if normwise:
        absolute: Callable[[np.ndarray], Any] = _constant(
            max((float(spread.max(initial=0.0)) for _, spread, _ in blocks()), default=0.0))
    elif n <= SMALLEST:
        absolute = _constant(max((float(spread.max()) for _, spread, _ in blocks()),
                                 default=0.0))
    else:
        largest, counts = np.zeros(2049), np.zeros(2048, dtype=np.int64)
        for _, spread, magnitude in blocks():
            binades = _binades(magnitude)
            np.maximum.at(largest, binades, spread)
            counts += np.bincount(binades, minlength=2048)
        absolute = _by_binade(_absolute_table(largest, counts, n))
    eps = _eps(reference.dtype)
    bound = np.empty(n)
    with np.errstate(invalid="ignore", over="ignore"):
        for part, spread, magnitude in blocks():
            block = C * spread + absolute(magnitude) + U * eps * magnitude
            bound[part] = np.where(np.isfinite(block), block, 0.0)
    return keep(bound.reshape(reference.shape))


def _spread_and_magnitude(reference: np.ndarray, truth: np.ndarray, perturbed: np.ndarray,
                          wide: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """How far the strict reference and the perturbed truth are from the truth, the larger,
    and the truth's magnitude (0.0 where the truth is not finite; each distance 0.0 where a
    side is not)."""
    r = reference.astype(wide)
    t, p = truth.astype(wide, copy=False), perturbed.astype(wide, copy=False)  # read only
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(t)
        rounding = np.where(finite & np.isfinite(r), np.abs(r - t), 0.0)
        conditioning = np.where(finite & np.isfinite(p), np.abs(p - t), 0.0)
        return np.maximum(rounding, conditioning), np.where(finite, np.abs(t), 0.0)


def _constant(value: float) -> Callable[[np.ndarray], float]:
    return lambda magnitude: value


def _by_binade(table: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The absolute term of each element, looked up by its magnitude's binade."""
    return lambda magnitude: table[_binades(magnitude)]


def _binades(magnitude: np.ndarray) -> np.ndarray:
    """Each element's binade: the biased exponent of its (finite) magnitude, 0 for zero and
    subnormals."""
    flat = np.ascontiguousarray(magnitude, dtype=np.float64).reshape(-1)
    return (flat.view(np.uint64) >> np.uint64(52)).astype(np.uint16)


def _absolute_table(largest: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """The absolute term by binade, from the largest spread in each binade (`largest`) and
    how many of the `n` elements each holds (`counts`): see `_absolute`."""
    below = np.maximum.accumulate(largest)  # by binade: the most spread at or below it
    floor = below[int(np.searchsorted(np.cumsum(counts), n // SMALLEST + 1))]
    return np.maximum(below[1:], floor)


def _absolute(spread: np.ndarray, magnitude: np.ndarray) -> np.ndarray | float:
    """The bound's absolute term per element: the largest spread among the elements of at
    most about its magnitude (its binade and the next), or among the smallest `1 / SMALLEST`
    of the array (their binades) if that is more. A cancellation's rounding shows at elements
    near zero, where one element's own spread may be small by luck while its neighbours' is
    not; an element far larger than its array's small ones takes theirs. An array of at most
    `SMALLEST` elements takes its largest spread everywhere."""
    n = spread.size
    if n <= SMALLEST:
        return float(spread.max()) if n else 0.0
    binades = _binades(magnitude)
    largest = np.zeros(2049)
    np.maximum.at(largest, binades, spread.reshape(-1))
    table = _absolute_table(largest, np.bincount(binades, minlength=2048), n)
    return table[binades].reshape(spread.shape)


def with_noise(truth: Truth, noise: Noise, strict: LiteralValue,
               keep: Callable[[Any], Any] | None = None) -> Truth:
    """`truth` with each element's bound widened by `C` times how far the random-rounding
    samples of the reference (`judge/noise/`) strayed from the truth there: no array-wide
    term, so noise that crosses a discontinuity widens the bound only downstream of it.

    Rounding may decide whether an element is finite at all (`sqrt` of an operand within
    rounding of 0): where the truth is not finite but some samples are, the samples' middle
    stands for the truth, the strictly rounded reference (`strict`, itself one legal
    rounding) counted among them, and its bound is `C` times their half range plus `U` ulps
    at its magnitude, as `truth_of` makes one. Without the reference and the ulps, a range
    of one finite sample (or of the split sample alone) left a computed value a bound of 0.
    A NaN is legal wherever the truth, some random sample or the domain sample was NaN.

    An element on a domain boundary (NaN in some random sample, finite in the truth, the
    reference or another sample) follows, on its defined side, an operand as near the
    boundary as rounding lets it land, where the slope is unbounded (`m / (sqrt(v) + eps)`,
    AdamW on `--fake-data`): how far its own few finite samples reach is luck (one is a
    range of no width). Its spread is at least the largest among the result's elements on
    the boundary of about its magnitude (`_absolute` over them, every output's together: the
    same boundary, an optimizer's second moment, runs through every parameter array, and a
    small array has few elements on it). `keep` takes each array as it is made (to move it
    to disk: `replay/spill.py`), so a training step's bounds are not all in memory at once."""
    nan_seen = noise.nan_seen if noise.nan_seen is not None else _none_like(truth.value)
    kept = keep or (lambda array: array)
    # First each array's spread where it is on a domain boundary, with its magnitude there
    # (few elements), so that no array's bound waits in memory for the others'.
    on_boundary: list[tuple[np.ndarray, np.ndarray]] = []

    def boundary_of(leaf: tuple) -> None:
        t, _, _, spread, boundary = leaf
        if spread is not None:
            on_boundary.append((spread, np.abs(t[boundary])))

    _noisy(truth.value, truth.bound, noise.low, noise.high, nan_seen, strict, boundary_of)
    least = np.zeros(0)
    if on_boundary:
        spreads = np.concatenate([s for s, _ in on_boundary])
        least = np.broadcast_to(_absolute(spreads, np.concatenate([m for _, m in on_boundary])),
                                spreads.shape)
    start = 0

    def widened(leaf: tuple) -> tuple:
        """The array's value, bound (widened on the boundary) and legal NaNs, kept."""
        nonlocal start
        t, bound, legal_nan, spread, boundary = leaf
        if bound is None:
            return (kept(t), None, None)
        if spread is not None:
            extra = np.fmax(least[start:start + spread.size] - spread, 0.0)  # inf - inf
            bound[boundary] += C * extra  # `bound` is this stage's own array
            start += spread.size
        return (kept(t), kept(bound), kept(legal_nan))

    parts = _noisy(truth.value, truth.bound, noise.low, noise.high, nan_seen, strict, widened)
    return Truth(_pick(parts, 0), _pick(parts, 1), noise.discontinuities, _pick(parts, 2),
                 noise.left_out)


def _none_like(value: Any) -> Any:
    return tuple(_none_like(v) for v in value) if isinstance(value, tuple) else None


def _pick(parts: Any, index: int) -> Any:
    if isinstance(parts, list):
        return tuple(_pick(part, index) for part in parts)
    return parts[index]


def _noisy(value: Any, bound: Any, low: Any, high: Any, nan_seen: Any, strict: Any,
           finish: Callable[[tuple], Any]) -> Any:
    """`finish` of (value, bound, NaN legal, spread on a domain boundary, on a domain
    boundary) for each array as it is made, in lists with the structure of `value`. The
    spread is kept only where the element is on a boundary (None where none is): the whole
    array's, for a training step's result, would be as large again as its bound."""
    if isinstance(value, tuple):
        if not isinstance(low, tuple) or len(low) != len(value):
            raise ValueError("the random-rounding result has another structure")
        if not isinstance(strict, tuple) or len(strict) != len(value):
            raise ValueError("the reference has another structure")
        return [_noisy(v, b, lo, hi, n, r, finish) for v, b, lo, hi, n, r
                in zip(value, bound, low, high, nan_seen, strict, strict=True)]
    if bound is None:
        return finish((value, None, None, None, None))
    t = np.asarray(value)
    if np.shape(low) != t.shape:
        raise ValueError(f"the random-rounding result has shape {np.shape(low)}, the truth "
                         f"{t.shape}")
    return finish(_noisy_array(t, np.asarray(bound), np.asarray(low), np.asarray(high),
                               None if nan_seen is None else np.asarray(nan_seen),
                               np.asarray(strict)))


def _noisy_array(value: np.ndarray, bound: np.ndarray, low: np.ndarray, high: np.ndarray,
                 nan_seen: np.ndarray | None, strict: np.ndarray) -> tuple:
    """`_noisy`'s tuple for one array, a block at a time (`BLOCK`): a model's outputs have
    tens of millions of elements, and whole-array temporaries are fresh pages each."""
    shape, n = value.shape, value.size
    t_flat, bound_flat, low_flat, high_flat, strict_flat = (
        np.broadcast_to(array, shape).reshape(-1) for array in (value, bound, low, high, strict))
    seen_flat = None if nan_seen is None else np.broadcast_to(nan_seen, shape).reshape(-1)
    truth = value  # a copy once some element's truth is replaced by its samples' middle
    widened, legal_nan = np.empty(n), np.empty(n, dtype=bool)
    boundary = None if nan_seen is None else np.empty(n, dtype=bool)
    on_boundary: list[np.ndarray] = []
    for begin in range(0, n, BLOCK):
        part = slice(begin, begin + BLOCK)
        t, widened[part], legal_nan[part], spread, edge = _noisy_block(
            t_flat[part], bound_flat[part], low_flat[part], high_flat[part],
            None if seen_flat is None else seen_flat[part], strict_flat[part])
        if t is not None:
            if truth is value:
                truth = value.copy()
            truth.reshape(-1)[part] = t
        if edge is not None and boundary is not None:
            boundary[part] = edge
            on_boundary.append(spread[edge])
    found = np.concatenate(on_boundary) if on_boundary else np.zeros(0)
    return (truth, widened.reshape(shape), legal_nan.reshape(shape),
            found if found.size else None,
            None if boundary is None else boundary.reshape(shape))


def _noisy_block(value: np.ndarray, bound: np.ndarray, low: np.ndarray, high: np.ndarray,
                 nan_seen: np.ndarray | None, strict: np.ndarray
                 ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray,
                            np.ndarray | None]:
    """One block's truth (None when unchanged), widened bound, legal NaNs, spread and where
    it is on a domain boundary (None without `nan_seen`)."""
    t, lo, hi = value, low, high
    if lo.dtype != t.dtype:  # kept in the output's storage type, rounded outward
        lo, hi = lo.astype(t.dtype), hi.astype(t.dtype)
    changed = None
    with np.errstate(invalid="ignore", over="ignore"):
        undefined = ~np.isfinite(t)
        own: np.ndarray | float = 0.0
        if np.any(undefined):
            # The strictly rounded reference is one legal rounding too: where the truth is
            # not finite, it joins the samples' range (`fmin`/`fmax` skip NaNs).
            wide = strict.astype(t.dtype)
            lo = np.where(undefined, np.fmin(lo, wide), lo)
            hi = np.where(undefined, np.fmax(hi, wide), hi)
            decided = undefined & np.isfinite(lo) & np.isfinite(hi)
            t = changed = np.where(decided, (lo + hi) / 2, t)
            own = np.where(decided, U * _eps(strict.dtype) * np.abs(t), 0.0)
        spread = np.maximum(np.abs(hi - t), np.abs(lo - t))
        # A sample past the largest finite value (of f64, or of the storage type the range
        # is kept in) where the truth is finite: rounding alone takes the element anywhere,
        # so its bound has no end. Where the truth itself is not finite, no spread.
        spread = np.where(np.isnan(spread) | ~np.isfinite(t), 0.0, spread)
        widened = bound + C * spread + own
        boundary = None
        if nan_seen is not None:  # NaN in a random sample, finite in some legal evaluation
            boundary = nan_seen & np.isfinite(t) & (
                np.isfinite(value) | np.isfinite(lo) | np.isfinite(strict))
    legal_nan = np.isnan(value)
    if nan_seen is not None:
        legal_nan = legal_nan | nan_seen
    return (changed, np.where(np.isnan(widened), bound, widened), legal_nan, spread,
            boundary)

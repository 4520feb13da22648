"""Tolerant comparison: per-dtype defaults, NaN/Inf, shapes, tuples and the reported errors."""

from __future__ import annotations

import json
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from workbench.output.json_shapes import comparison_json
from workbench.replay.judge.compare import (
    DEFAULT_TOLERANCES,
    Tolerance,
    compare,
    default_tolerance,
    describe_array,
    results_equal,
)


def test_identical_arrays_are_ok() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    result = compare(x, x.copy())
    assert result.ok
    assert (result.total, result.mismatches, result.max_abs_error) == (12, 0, 0.0)
    assert result.first_index is None
    assert result.summary.startswith("ok: 12 elements within atol 1e-05, rtol 0.0001")


def test_default_tolerances_per_dtype() -> None:
    assert default_tolerance(np.dtype(np.float64)) == Tolerance(1e-9, 1e-7)
    assert default_tolerance(np.dtype(np.float32)) == Tolerance(1e-5, 1e-4)
    assert default_tolerance(np.dtype(np.float16)) == Tolerance(1e-3, 1e-2)
    assert default_tolerance(np.dtype(ml_dtypes.bfloat16)) == Tolerance(1e-2, 5e-2)
    assert default_tolerance(np.dtype(ml_dtypes.float8_e4m3fn)) == Tolerance(0.25, 0.25)
    assert default_tolerance(np.dtype(ml_dtypes.float8_e5m2)) == Tolerance(0.5, 0.5)
    for exact in (np.int8, np.int32, np.uint64, np.bool_, ml_dtypes.int4):
        assert default_tolerance(np.dtype(exact)) == Tolerance(0.0, 0.0)
    # Tighter for wider types.
    order = ["float64", "float32", "float16", "bfloat16"]
    rtols = [DEFAULT_TOLERANCES[name].rtol for name in order]
    assert rtols == sorted(rtols)


def test_float32_relative_and_absolute_parts() -> None:
    expected = np.array([1000.0, 0.0, 1.0], dtype=np.float32)
    # 1000 * 1e-4 = 0.1 allowed; 0 allows atol only; 1.0 allows 1e-5 + 1e-4.
    close = np.array([1000.09, 9e-6, 1.0001], dtype=np.float32)
    assert compare(expected, close).ok
    far = np.array([1000.2, 2e-5, 1.0], dtype=np.float32)
    result = compare(expected, far)
    assert not result.ok
    assert result.mismatches == 2 and result.total == 3
    assert result.first_index == (0,)
    assert result.expected_value == 1000.0
    assert result.actual_value == pytest.approx(1000.2, rel=1e-6)
    assert result.max_abs_error == pytest.approx(0.2, rel=1e-3)
    # Relative error ignores the element expected to be zero.
    assert result.max_rel_error == pytest.approx(0.2 / 1000.0, rel=1e-3)


def test_float64_is_tighter_than_float32() -> None:
    expected = np.array([1.0])
    actual = np.array([1.0 + 1e-6])
    assert not compare(expected, actual).ok
    assert compare(expected.astype(np.float32), actual.astype(np.float32)).ok


def test_low_precision_types_are_looser() -> None:
    expected = np.array([1.0, 2.0], dtype=np.float16)
    actual = np.array([1.005, 2.0], dtype=np.float16)
    assert compare(expected, actual).ok
    assert not compare(expected.astype(np.float32), actual.astype(np.float32)).ok
    bf = ml_dtypes.bfloat16
    assert compare(np.array([3.0], dtype=bf), np.array([3.0625], dtype=bf)).ok
    f8 = ml_dtypes.float8_e4m3fn
    assert compare(np.array([1.0], dtype=f8), np.array([1.125], dtype=f8)).ok
    assert not compare(np.array([1.0], dtype=f8), np.array([2.0], dtype=f8)).ok


def test_integers_and_pred_are_exact() -> None:
    assert not compare(np.array([5, 7], np.int32), np.array([5, 8], np.int32)).ok
    result = compare(np.array([True, False]), np.array([True, True]))
    assert not result.ok and result.first_index == (1,)
    assert result.expected_value is False and result.actual_value is True
    big = np.array([2**62 + 1], np.int64)
    assert not compare(big, big - 1).ok  # float64 would round both to the same value
    assert compare(np.array([5], np.uint8), np.array([5], np.uint8)).ok


def test_override_tolerances() -> None:
    expected = np.array([1.0, 2.0], np.float32)
    actual = np.array([1.1, 2.0], np.float32)
    assert not compare(expected, actual).ok
    assert compare(expected, actual, atol=0.2).ok
    assert compare(expected, actual, rtol=0.2).ok
    assert not compare(expected, actual, atol=0.0, rtol=0.01).ok
    result = compare(expected, actual, atol=0.2, rtol=0.0)
    assert result.tolerances == {"f32": Tolerance(0.2, 0.0)}
    assert compare(np.array([10], np.int32), np.array([11], np.int32), atol=1).ok


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
def test_nan_and_inf(dtype: type) -> None:
    nan, inf = np.nan, np.inf
    expected = np.array([nan, inf, -inf, 1.0, -0.0], dtype=dtype)
    assert compare(expected, expected.copy()).ok
    assert compare(expected, np.array([nan, inf, -inf, 1.0, 0.0], dtype=dtype)).ok
    cases = [
        (np.array([1.0, inf, -inf, 1.0, 0.0], dtype=dtype), 0),  # NaN expected, number actual
        (np.array([nan, -inf, -inf, 1.0, 0.0], dtype=dtype), 1),  # sign of infinity
        (np.array([nan, inf, 5.0, 1.0, 0.0], dtype=dtype), 2),  # infinity vs finite
        (np.array([nan, inf, -inf, nan, 0.0], dtype=dtype), 3),  # number expected, NaN actual
    ]
    for actual, index in cases:
        result = compare(expected, actual)
        assert not result.ok and result.mismatches == 1 and result.first_index == (index,)
        assert result.max_abs_error == np.inf


def test_complex_uses_modulus() -> None:
    expected = np.array([1 + 1j, 2 - 1j], np.complex64)
    assert compare(expected, expected + np.complex64(1e-6j)).ok
    result = compare(expected, expected + np.complex64(0.5))
    assert not result.ok and result.max_abs_error == pytest.approx(0.5)
    assert comparison_json(result)["first_mismatch"]["expected"] == [1.0, 1.0]
    nan_c = np.array([complex(np.nan, 0)], np.complex128)
    assert compare(nan_c, nan_c.copy()).ok


def test_shape_and_dtype_mismatch_are_reported_as_such() -> None:
    result = compare(np.zeros((4, 8), np.float32), np.zeros((8, 4), np.float32))
    assert not result.ok
    assert result.summary == "shape mismatch: expected f32[4,8], actual f32[8,4]"
    result = compare(np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert result.problem == "dtype mismatch: expected f32[3], actual f64[3]"
    scalar = compare(np.float32(1.0), np.array([1.0], np.float32))
    assert scalar.problem == "shape mismatch: expected f32[], actual f32[1]"


def test_nested_tuples() -> None:
    expected = (np.arange(4, dtype=np.float32), (np.int32(3), np.ones((2, 2), np.float64)))
    actual = (np.arange(4, dtype=np.float32),
              (np.int32(3), np.array([[1.0, 1.0], [1.0, 3.0]])))
    result = compare(expected, actual)
    assert not result.ok
    assert (result.total, result.mismatches) == (9, 1)
    assert result.first_element == (1, 1) and result.first_index == (1, 1)
    assert result.location == "{1}{1}[1,1]"
    assert set(result.tolerances) == {"f32", "s32", "f64"}
    assert "first at {1}{1}[1,1]: expected 1.0, actual 3.0" in result.summary
    structure = compare(expected, (expected[0],))
    assert structure.problem is not None and structure.problem.startswith("structure mismatch")
    leaf = compare(expected, (expected[0], np.float32(1)))
    assert leaf.problem is not None and leaf.location == "{1}"


def test_results_equal_is_exact() -> None:
    x = np.array([1.0, np.nan], np.float32)
    assert results_equal(x, x.copy())
    assert not results_equal(x, np.array([1.0 + 1e-7, np.nan], np.float32))


def test_json_is_strict_and_complete() -> None:
    result = compare(np.array([1.0, np.inf]), np.array([1.0, 2.0]))
    payload = comparison_json(result)
    text = json.dumps(payload, allow_nan=False)  # no bare Infinity/NaN
    assert json.loads(text)["max_abs_error"] == "inf"
    assert payload["mismatches"] == 1 and payload["first_mismatch"]["index"] == [1]
    assert payload["summary"] == result.summary


def test_describe_array() -> None:
    assert describe_array(np.zeros((2, 3), ml_dtypes.bfloat16)) == "bf16[2,3]"
    assert describe_array((np.zeros(2, np.int32), np.bool_(True))) == "(s32[2], pred[])"


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float16, np.float32, np.float64]),
                  hnp.array_shapes(max_dims=3, max_side=5)),
       st.data())
def test_any_array_matches_itself_and_a_planted_error_is_found(array: np.ndarray,
                                                              data: st.DataObject) -> None:
    assert compare(array, array.copy()).ok
    finite = np.flatnonzero(np.isfinite(array))
    if finite.size == 0:
        return
    flat = int(data.draw(st.sampled_from(finite.tolist())))
    index = np.unravel_index(flat, array.shape)
    tolerance = default_tolerance(array.dtype)
    changed = array.copy()
    bump = 2 * (tolerance.atol + tolerance.rtol * abs(float(array[index]))) + 1.0
    with np.errstate(over="ignore"):
        changed[index] = array[index] + array.dtype.type(bump)
    result = compare(array, changed)
    if np.isfinite(changed[index]) and changed[index] == array[index]:
        return  # the bump vanished in rounding (a huge value): nothing changed
    assert not result.ok
    assert result.mismatches == 1
    assert result.first_index == tuple(int(i) for i in index)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32", "bool", "complex64"])
def test_bit_identical_arrays_say_what_an_element_by_element_comparison_says(
        dtype: str) -> None:
    """Arrays bit for bit alike (NaNs and infinities too) take a short path, whose result
    equals the element-by-element one (computed here for copies that differ in one element
    the comparison cannot tell apart: -0.0 and 0.0, or a NaN's payload)."""
    values = np.array([[1.5, -0.0, np.inf], [np.nan, 3.0, -2.25]])
    if dtype == "bool":
        values = np.array([[True, False, True], [False, True, True]])
    elif dtype == "int32":
        values = np.array([[7, 0, -3], [2**31 - 1, 5, -(2**31)]])
    array = values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    same = compare(array, array.copy())
    assert same.ok and same.total == array.size and same.mismatches == 0
    assert same.max_abs_error == 0.0 and same.max_rel_error == 0.0
    assert list(same.tolerances) == [{"float32": "f32", "bfloat16": "bf16", "int32": "s32",
                                      "bool": "pred", "complex64": "c64"}[dtype]]
    if array.dtype.kind == "f" or dtype == "bfloat16":
        other = array.copy()
        other[0, 1] = 0.0  # -0.0 before: not the same bits, the same value
        slow = compare(array, other)
        assert (slow.ok, slow.total, slow.mismatches, slow.max_abs_error, slow.tolerances) == (
            same.ok, same.total, same.mismatches, same.max_abs_error, same.tolerances)


def test_a_mismatch_records_its_errors_by_power_of_ten() -> None:
    """What a report's histogram at the culprit shows; summed over the outputs of a tuple."""
    expected = np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32)
    actual = np.array([1.0, 2.5, 3.03, np.nan, 5.0], dtype=np.float32)
    result = compare((expected, expected[:2]), (actual, np.array([1.0, 2.5], np.float32)))
    assert not result.ok and result.errors is not None
    assert result.errors.decades == ((-2, 1), (-1, 2))  # 0.03; 0.5 twice
    assert (result.errors.exact, result.errors.not_finite) == (3, 1)


def test_an_ok_comparison_keeps_no_histogram() -> None:
    values = np.array([1.0, 2.0], dtype=np.float32)
    assert compare(values, values + np.float32(1e-7)).errors is None


def _within_bound_on_whole_arrays(expected: np.ndarray, actual: np.ndarray,
                                  beyond_tolerance: np.ndarray, truth: Any
                                  ) -> tuple[tuple[int, ...], float, float, np.ndarray, int]:
    """The bound check as whole-array passes: what `_within_bound` must agree with."""
    value = np.asarray(truth.value)
    bound = np.broadcast_to(np.asarray(truth.bound, dtype=np.float64), actual.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(actual.astype(np.float64) - value)
        error = np.where(np.isfinite(error), error, np.inf)
        undefined = np.asarray(np.isnan(actual))
        if truth.legal_nan is not None:
            error = np.where(undefined & truth.legal_nan, 0.0, error)
            undefined &= ~truth.legal_nan
        still = beyond_tolerance & (~(error <= bound) | undefined)
        ratio = np.array(error / np.maximum(bound, np.finfo(np.float64).tiny))
    endless = np.isinf(bound)
    ratio[endless] = np.where(undefined[endless], np.inf, 0.0)
    unbounded = int(np.count_nonzero(endless & beyond_tolerance & ~still))
    worst = np.unravel_index(int(np.argmax(np.where(beyond_tolerance, ratio, -1.0))),
                             actual.shape)
    return (tuple(int(i) for i in worst), float(error[worst]), float(bound[worst]), still,
            unbounded)


@pytest.mark.parametrize("shape", [(), (7,), (3, 5, 4)])
def test_the_bound_is_checked_at_the_elements_beyond_the_tolerance_alone(
        shape: tuple[int, ...]) -> None:
    """`_within_bound` computes at the elements beyond the tolerance only (a model's step has
    hundreds of millions): the worst element, the mask and the unbounded count are those of
    the whole arrays, with NaNs legal and not, unending bounds and a broadcast bound."""
    from workbench.replay.judge.compare import Truth, _within_bound

    rng = np.random.default_rng(7)

    def drawn(draw: Any) -> np.ndarray:
        return np.asarray(draw(shape))

    for trial in range(20):
        truth_value = drawn(rng.standard_normal)
        actual = np.asarray((truth_value + drawn(rng.standard_normal) * 0.1).astype(np.float32))
        actual[drawn(rng.random) < 0.1] = np.nan
        expected = truth_value.astype(np.float32)
        bound = np.asarray(np.abs(drawn(rng.standard_normal)) * 0.1)
        bound[drawn(rng.random) < 0.1] = np.inf
        legal = np.asarray(drawn(rng.random) < 0.5) if trial % 2 else None
        beyond = np.asarray(drawn(rng.random) < 0.6)
        beyond.reshape(-1)[0] = True  # one at least
        for kept in (bound, np.float64(0.05)):
            truth = Truth(truth_value, kept, (), legal)
            check, still, unbounded = _within_bound(expected, actual, beyond, truth, (0,))
            worst, error, at_bound, whole_still, whole_unbounded = \
                _within_bound_on_whole_arrays(expected, actual, beyond, truth)
            assert check.index == worst and check.error == error and check.bound == at_bound
            np.testing.assert_array_equal(still, whole_still)
            assert unbounded == whole_unbounded


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, ml_dtypes.bfloat16])
def test_comparing_a_block_at_a_time_changes_nothing(
        dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrays are compared a block at a time (`BLOCK` elements): with blocks of 3 (a partial
    last one, strided inputs, NaNs and infinities) every figure of the comparison is the one
    a single block gives, and a difference anywhere, in the last block too, is found."""
    from workbench.replay.judge import compare as module

    rng = np.random.default_rng(3)
    expected = rng.standard_normal((5, 9)).astype(dtype)
    actual = (expected.astype(np.complex128 if dtype == np.complex64 else np.float64)
              + rng.standard_normal((5, 9)) * 1e-3).astype(dtype)
    actual[1, 2], expected[1, 2] = np.nan, np.nan
    actual[2, 3], expected[3, 4], actual[4, 8] = np.inf, np.inf, np.nan
    pairs = [(expected, actual), (expected[:, ::2], actual[:, ::2]),
             (expected[0, 0], actual[0, 0]), (expected[:0], actual[:0])]
    whole = [repr(module.compare(e, a)) for e, a in pairs]
    last = expected.copy()
    last[4, 8] = 1
    assert not module.same_bits(expected, last) and module.same_bits(expected, expected.copy())
    monkeypatch.setattr(module, "BLOCK", 3)
    assert [repr(module.compare(e, a)) for e, a in pairs] == whole
    assert not module.same_bits(expected, last) and module.same_bits(expected, expected.copy())


def test_a_digest_tells_bits_types_shapes_and_structure_apart(tmp_path) -> None:
    import ml_dtypes

    from workbench.replay.judge.compare import digest

    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    on_disk = np.lib.format.open_memmap(tmp_path / "v.npy", mode="w+", dtype=np.float32,
                                        shape=(2, 3))
    on_disk[...] = values
    assert digest(values) == digest(on_disk) == digest(values.copy(order="F"))
    assert digest((values, values[0])) == digest((values.copy(), values[0].copy()))
    changed = values.copy()
    changed[1, 2] = np.nextafter(changed[1, 2], np.float32(9))
    others = [changed, values.reshape(3, 2), values.astype(np.float64),
              values.view(np.int32), (values,), (values, values[0]), ((values,), values[0]),
              values.astype(ml_dtypes.bfloat16), np.float32(-0.0), np.float32(0.0)]
    digests = {digest(v) for v in [values, *others]}
    assert len(digests) == len(others) + 1


def _bound_on_whole_arrays(strict: np.ndarray, truth: np.ndarray, perturbed: np.ndarray,
                           normwise: bool) -> np.ndarray:
    """The bound as whole-array passes: what `error_bound._bounds`, a block at a time, must
    agree with."""
    from workbench.replay.judge.error_bound import C, U, _absolute, _eps

    wide = np.complex128 if strict.dtype.kind == "c" else np.float64
    r, t, p = strict.astype(wide), truth.astype(wide), perturbed.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(t)
        spread = np.maximum(np.where(finite & np.isfinite(r), np.abs(r - t), 0.0),
                            np.where(finite & np.isfinite(p), np.abs(p - t), 0.0))
        magnitude = np.where(finite, np.abs(t), 0.0)
        absolute = float(spread.max(initial=0.0)) if normwise else _absolute(spread, magnitude)
        bound = C * spread + absolute + U * _eps(strict.dtype) * magnitude
    return np.where(np.isfinite(bound), bound, 0.0)


@pytest.mark.parametrize("size", [0, 1, 64, 65, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, ml_dtypes.bfloat16])
def test_the_bound_made_a_block_at_a_time_is_the_whole_arrays_bound(
        size: int, dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`error_bound._bounds` runs a block at a time (the absolute term's statistics first):
    with blocks of 3 and of the default size, every element's bound is the one whole-array
    passes give, NaNs and infinities on each side, strided outputs and norm-wise ones too."""
    from workbench.replay.judge import error_bound

    rng = np.random.default_rng(size)
    truth = rng.standard_normal(size) * np.exp(rng.uniform(-20, 20, size))
    if dtype == np.complex64:
        truth = truth + 1j * rng.standard_normal(size)
    strict = (truth * (1 + rng.standard_normal(size) * 1e-3)).astype(dtype)
    perturbed = truth * (1 + rng.standard_normal(size) * 1e-4)
    for array in (truth, perturbed, strict):
        array[rng.integers(0, max(size, 1), size // 10)] = np.nan
        array[rng.integers(0, max(size, 1), size // 10)] = -np.inf
    shapes = [(strict, truth, perturbed)]
    if size == 1000:
        shapes.append(tuple(a.reshape(20, 50)[:, ::3] for a in (strict, truth, perturbed)))
    for block in (error_bound.BLOCK, 3):
        monkeypatch.setattr(error_bound, "BLOCK", block)
        for r, t, p in shapes:
            for normwise in (False, True):
                made = error_bound._bounds(r, t, p, normwise, lambda bound: bound)
                np.testing.assert_array_equal(made, _bound_on_whole_arrays(r, t, p, normwise))
                assert made.shape == r.shape


@pytest.mark.parametrize("shape", [(), (7,), (30, 40)])
def test_the_bound_widened_by_noise_a_block_at_a_time_is_the_whole_arrays(
        shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """`error_bound._noisy` runs a block at a time: with blocks of 3, the truth (its
    undefined elements replaced by their samples' middle), the widened bound, the legal NaNs
    and the spreads on a domain boundary are those of one block (the arrays here are
    smaller than one), with NaNs and infinities in the truth, the range and the reference."""
    from workbench.replay.judge import error_bound

    rng = np.random.default_rng(len(shape))
    size = int(np.prod(shape))
    truth = rng.standard_normal(shape)
    bound = np.abs(rng.standard_normal(shape)) * 1e-6
    low = (truth - np.abs(rng.standard_normal(shape)) * 1e-5).astype(np.float32)
    high = (truth + np.abs(rng.standard_normal(shape)) * 1e-5).astype(np.float32)
    strict = truth.astype(np.float32)
    for array, specials in ((truth, (np.nan, np.inf)), (low, (np.nan, -np.inf)),
                            (high, (np.nan, np.inf)), (strict, (np.nan, np.inf))):
        for special in specials:
            array.reshape(-1)[rng.integers(0, size, max(size // 12, 1))] = special
    for nan_seen in (np.asarray(rng.random(shape) < 0.2), None):
        arguments = (truth, bound, low, high, nan_seen, strict)
        whole = error_bound._noisy(*arguments, finish=lambda leaf: leaf)
        monkeypatch.setattr(error_bound, "BLOCK", 3)
        blocked = error_bound._noisy(*arguments, finish=lambda leaf: leaf)
        monkeypatch.undo()
        assert [part is None for part in blocked] == [part is None for part in whole]
        for made, expected in zip(blocked, whole, strict=True):
            if expected is not None:
                np.testing.assert_array_equal(made, expected)
        if size > 100:  # some undefined truth was decided by its samples' middle
            assert not np.array_equal(whole[0], truth, equal_nan=True)

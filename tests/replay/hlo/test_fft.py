"""fft: the four transform types against hand-computed DFTs, and XLA's CPU results where its
behaviour is a choice (the imaginary parts IRFFT ignores, infinities)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Shape
from workbench.replay.errors import EvaluationError

c64 = np.complex64
f32 = np.float32
INF = np.inf


def fft(x: np.ndarray, fft_type: str, lengths: tuple[int, ...], result: Shape) -> np.ndarray:
    return run("fft", result, x, fft_type=fft_type, fft_length=lengths)


def test_fft_and_ifft_of_a_vector() -> None:
    x = np.array([1, 2, 3, 4], c64)
    spectrum = np.array([10, -2 + 2j, -2, -2 - 2j], c64)  # sum x_k e^{-2 pi i jk/4}
    assert_same(fft(x, "FFT", (4,), Shape("c64", (4,))), spectrum)
    assert_same(fft(spectrum, "IFFT", (4,), Shape("c64", (4,))), x)  # scaled by 1/N


def test_rfft_keeps_the_non_negative_frequencies() -> None:
    x = np.array([1, 2, 3, 4], f32)
    assert_same(fft(x, "RFFT", (4,), Shape("c64", (3,))), np.array([10, -2 + 2j, -2], c64))


def test_irfft_inverts_rfft() -> None:
    half = np.array([10, -2 + 2j, -2], c64)
    assert_same(fft(half, "IRFFT", (4,), Shape("f32", (4,))), np.array([1, 2, 3, 4], f32))


def test_irfft_ignores_the_imaginary_parts_of_zero_and_nyquist() -> None:
    # XLA's CPU backend: [1+5j, 2-1j, 3+7j] -> [2, 0, 0, -1] (as if 5j and 7j were 0)
    half = np.array([1 + 5j, 2 - 1j, 3 + 7j], c64)
    assert_same(fft(half, "IRFFT", (4,), Shape("f32", (4,))), np.array([2, 0, 0, -1], f32))


def test_two_dimensional_transform_over_the_trailing_dims_of_a_batch() -> None:
    x = np.zeros((2, 2, 3), c64)
    x[0] = 1  # a constant image: everything at frequency (0, 0)
    x[1, 0, 1] = 1j  # an impulse: a flat spectrum turned by its position
    out = fft(x, "FFT", (2, 3), Shape("c64", (2, 2, 3)))
    expected = np.zeros((2, 2, 3), c64)
    expected[0, 0, 0] = 6
    turn = np.exp(-2j * np.pi * np.arange(3) / 3)
    expected[1] = 1j * turn[None, :]
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert out.dtype == c64


def test_infinities_spread_as_on_xla_cpu() -> None:
    x = np.array([1, INF, 2, 3], c64)
    assert_same(fft(x, "FFT", (4,), Shape("c64", (4,))),
                np.array([INF, complex(-1, -INF), -INF, complex(-1, INF)], c64))


def test_double_precision_types() -> None:
    x = np.array([1, 1j], np.complex128)
    assert_same(fft(x, "FFT", (2,), Shape("c128", (2,))), np.array([1 + 1j, 1 - 1j], np.complex128))
    real = np.array([0.5, -0.25], np.float64)
    assert_same(fft(real, "RFFT", (2,), Shape("c128", (2,))),
                np.array([0.25, 0.75], np.complex128))


@pytest.mark.parametrize(("fft_type", "x", "lengths", "result"), [
    ("FFT", np.zeros(4, c64), (8,), Shape("c64", (8,))),
    ("IRFFT", np.zeros(4, c64), (4,), Shape("f32", (4,))),  # needs 4 // 2 + 1 = 3 inputs
    ("FFT", np.zeros(4, c64), (), Shape("c64", (4,))),
])
def test_malformed_lengths_are_errors(fft_type: str, x: np.ndarray, lengths: tuple[int, ...],
                                      result: Shape) -> None:
    with pytest.raises(EvaluationError):
        fft(x, fft_type, lengths, result)

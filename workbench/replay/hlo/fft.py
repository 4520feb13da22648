"""`fft`: the discrete Fourier transform over the trailing `fft_length` dimensions.

XLA's four kinds are numpy.fft's n-dimensional transforms on the same axes: FFT and IFFT
(complex to complex, IFFT scaled by 1/N), RFFT (real to the N/2+1 non-negative frequencies of
the last axis) and IRFFT (those back to N real values; the imaginary parts of the zero and
Nyquist frequencies are ignored, as both libraries do). numpy computes c64 in single
precision, like XLA's CPU library (DUCC), but in its own order: the last bits may differ.
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.registry import Value, handles


def fft_values(x: np.ndarray, fft_type: str, lengths: tuple[int, ...],
               result: np.dtype) -> np.ndarray:
    """The transform `fft_type` of `x` over its last len(lengths) axes."""
    rank = len(lengths)
    if not 1 <= rank <= 3 or rank > x.ndim:
        raise EvaluationError(f"fft over {rank} dimensions of a rank-{x.ndim} operand")
    axes = tuple(range(x.ndim - rank, x.ndim))
    trailing = x.shape[x.ndim - rank:]
    if fft_type in ("FFT", "IFFT", "RFFT"):
        if trailing != tuple(lengths):
            raise EvaluationError(f"fft_length {list(lengths)} for operand dims {list(trailing)}")
        if fft_type == "RFFT":
            if x.dtype.kind != "f":
                raise Unsupported(f"fft RFFT of {x.dtype}")
            return np.fft.rfftn(x, s=lengths, axes=axes).astype(result, copy=False)
        if x.dtype.kind != "c":
            raise Unsupported(f"fft {fft_type} of {x.dtype}")
        transform = np.fft.fftn if fft_type == "FFT" else np.fft.ifftn
        return transform(x, axes=axes).astype(result, copy=False)
    if fft_type == "IRFFT":
        expected = (*lengths[:-1], lengths[-1] // 2 + 1)
        if trailing != expected:
            raise EvaluationError(f"IRFFT of dims {list(trailing)} to fft_length {list(lengths)}")
        if x.dtype.kind != "c":
            raise Unsupported(f"fft IRFFT of {x.dtype}")
        return np.fft.irfftn(x, s=lengths, axes=axes).astype(result, copy=False)
    raise Unsupported(f"fft type {fft_type}")


@handles("fft")
def fft(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    if not instruction.fft_type or not instruction.fft_length:
        raise EvaluationError(f"{instruction.name}: fft without fft_type or fft_length")
    result = dtypes.dtype_of(instruction.shape.element_type)
    return fft_values(np.asarray(operands[0]), instruction.fft_type.upper(),
                      tuple(instruction.fft_length), result)

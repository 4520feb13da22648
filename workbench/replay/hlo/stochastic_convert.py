"""`stochastic-convert`: float to signed integer, rounding the magnitude up with a probability
equal to its fraction, the dice given as an operand of unsigned random bits.

XLA defines it by its StochasticConvertDecomposer (the CPU compiler runs it): the fraction of
|x|, scaled by 2^bits of the random type and converted to that type, is compared with the
random value; smaller random values round up. The sign is put back after rounding, and x at
or beyond the target's range (compared in x's own type) saturates. XLA implements only
float-to-signed-integer conversions; others are unsupported.
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.dtypes import F32, kind_of
from workbench.replay.hlo.registry import Value, handles


def stochastic_convert(x: np.ndarray, random: np.ndarray, target: np.dtype) -> np.ndarray:
    kind = kind_of(x.dtype)
    if kind not in ("float", "narrow") or kind_of(target) != "signed":
        raise Unsupported(f"stochastic-convert from {x.dtype} to {target}")
    if random.dtype.kind != "u" or random.dtype.itemsize != x.dtype.itemsize:
        raise EvaluationError(f"stochastic-convert of {x.dtype} with {random.dtype} random bits")
    # Every step up to the scaled fraction is exact in x's type, so it is computed in f32 for
    # the narrow floats (as XLA does for f16, whose range cannot hold the 2^16 scale).
    work = x.astype(F32) if kind == "narrow" else x
    negative = work < 0  # sign(x) < 0: false for -0.0 and NaN
    magnitude = np.abs(work)
    whole = np.floor(magnitude)
    scale = np.array(2.0 ** (8 * random.dtype.itemsize), work.dtype)
    threshold = dtypes.float_to_int((magnitude - whole) * scale, random.dtype)
    result = dtypes.float_to_int(whole, target)
    result = np.where(random < threshold, result + np.array(1, target), result)
    result = np.where(negative, -result, result)
    info = np.iinfo(target)
    # The bounds as constants of x's type (f16 cannot hold 2^31: they become infinities).
    low = np.array(info.min).astype(x.dtype).astype(work.dtype)
    high = np.array(info.max).astype(x.dtype).astype(work.dtype)
    result = np.where(work <= low, np.array(info.min, target), result)
    return np.where(work >= high, np.array(info.max, target), result).astype(target)


@handles("stochastic-convert", bit_exact=True)
def stochastic_convert_op(interpreter: object, instruction: Instruction,
                          operands: list[Value]) -> Value:
    x, random = (np.asarray(v) for v in operands)
    return stochastic_convert(x, random, dtypes.dtype_of(instruction.shape.element_type))

"""CHLO elementwise functions. numpy has no erf or erf⁻¹: they are computed in f64 with
Python's `math.erf` and the normal distribution's inverse CDF
(erf⁻¹(x) = Φ⁻¹((x + 1) / 2) / √2), then rounded to the element type."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from workbench.replay.mlir.dialects import chlo
from workbench.replay.mlir.interpreters.table import table_functions
from workbench.replay.mlir.values import shaped_result

_STANDARD_NORMAL = NormalDist()


def _erf_inv_scalar(value: float) -> float:
    if math.isnan(value) or abs(value) > 1:
        return math.nan
    if abs(value) == 1:
        return math.copysign(math.inf, value)
    if value == 0:
        return value  # keeps the sign of zero
    return _STANDARD_NORMAL.inv_cdf((value + 1) / 2) / math.sqrt(2)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erf_inv = np.vectorize(_erf_inv_scalar, otypes=[np.float64])


def _wide(function: Any) -> Any:
    return lambda op, value: shaped_result(
        function(np.asarray(value, np.float64)), op.results[0].type
    )


TABLE = {
    chlo.SquareOp: lambda op, value: shaped_result(np.multiply(value, value), op.results[0].type),
    chlo.ErfOp: _wide(_erf),
    chlo.ErfInvOp: _wide(_erf_inv),
    chlo.TanOp: lambda op, value: shaped_result(np.tan(value), op.results[0].type),
    chlo.SinhOp: lambda op, value: shaped_result(np.sinh(value), op.results[0].type),
    chlo.CoshOp: lambda op, value: shaped_result(np.cosh(value), op.results[0].type),
}

ChloFunctions = table_functions("ChloFunctions", TABLE)

"""chlo: square, erf and its inverse, with their edge values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.mlir_snippets import run


def chlo(op: str, values: list[float], dtype: str = "f32") -> np.ndarray:
    type_ = f"tensor<{len(values)}x{dtype}>"
    text = f"""
    func.func @main(%a: {type_}) -> {type_} {{
      %0 = chlo.{op} %a : {type_} -> {type_}
      return %0 : {type_}
    }}"""
    return run(text, np.array(values, np.dtype({"f32": np.float32, "f16": np.float16}[dtype])))


def test_square_rounds_and_overflows_in_the_element_type() -> None:
    result = chlo("square", [-3.0, 300.0, -0.0], "f16")
    assert result.dtype == np.float16
    assert result[0] == 9 and result[1] == np.inf and result[2] == 0 and not np.signbit(result[2])


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.5, 0.4769362762044699), (-0.0, -0.0), (1.0, math.inf), (-1.0, -math.inf),
     (1.5, math.nan), (math.nan, math.nan)],
)
def test_erf_inv(value: float, expected: float) -> None:
    (result,) = chlo("erf_inv", [value])
    if math.isnan(expected):
        assert np.isnan(result)
    else:
        assert result == np.float32(expected)
        assert bool(np.signbit(result)) == (math.copysign(1, expected) < 0)


def test_erf_and_its_inverse_agree() -> None:
    values = [-0.9, -0.25, 0.0, 0.3, 0.99]
    roundtrip = chlo("erf", list(chlo("erf_inv", values)))
    np.testing.assert_allclose(roundtrip, values, rtol=2e-6, atol=1e-7)

"""Elementwise ops: one table entry each, on shared unary / binary helpers.

Each entry gives the numpy function per kind of element type ('float' also serves the narrow
floats, computed in f32 and rounded back once per op, as XLA does). A kind with no function
is `unsupported: <opcode> on <type>`. Edge cases follow XLA (checked against its CPU backend
and HloEvaluator): integer division by zero gives -1 (unsigned: all ones) and INT_MIN / -1
gives INT_MIN; remainder by zero gives the dividend; shifts by the bit width or more give 0
(arithmetic right shift: the sign); maximum/minimum propagate NaN and order -0.0 < +0.0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.dtypes import F32, cast, kind_of
from workbench.replay.hlo.registry import Handler, Value, handles

Fn = Callable[..., np.ndarray]


def _kinds(float_: Fn | None = None, signed: Fn | None = None, unsigned: Fn | None = None,
           pred: Fn | None = None, complex_: Fn | None = None) -> dict[str, Fn | None]:
    return {"float": float_, "narrow": float_, "signed": signed, "unsigned": unsigned,
            "pred": pred, "complex": complex_}


def _unsupported_type(opcode: str, dtype: np.dtype) -> Unsupported:
    return Unsupported(f"{opcode} on {dtype}")


def _finish(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round a result computed in f32 back to its narrow float type (bool results stay)."""
    return cast(result, dtype) if result.dtype == F32 else result


def unary(table: dict[str, Fn | None]) -> Handler:
    def handler(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
        x = operands[0]
        kind = kind_of(x.dtype)
        function = table[kind]
        if function is None:
            raise _unsupported_type(instruction.opcode, x.dtype)
        if kind == "narrow":
            return _finish(function(cast(x, F32)), x.dtype)
        return function(x)

    return handler


def binary(table: dict[str, Fn | None]) -> Handler:
    def handler(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
        x, y = operands
        kind = kind_of(x.dtype)
        function = table[kind]
        if function is None:
            raise _unsupported_type(instruction.opcode, x.dtype)
        if kind == "narrow":
            if isinstance(function, np.ufunc):  # widened in numpy's buffers, not as copies
                return _finish(function(x, y, dtype=F32), x.dtype)
            return _finish(function(cast(x, F32), cast(y, F32)), x.dtype)
        return function(x, y)

    return handler


# -- float helpers ------------------------------------------------------------------------


def float_maximum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NaN-propagating maximum with -0.0 < +0.0 (llvm.maximum, as XLA's CPU backend)."""
    result = np.maximum(x, y)
    zeros = (x == 0) & (y == 0)
    if zeros.any():
        result = np.where(zeros, np.where(np.signbit(x), y, x), result)
    return result


def float_minimum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result = np.minimum(x, y)
    zeros = (x == 0) & (y == 0)
    if zeros.any():
        result = np.where(zeros, np.where(np.signbit(x), x, y), result)
    return result


def _float_sign(x: np.ndarray) -> np.ndarray:
    # copysign(x != 0, x), NaN stays NaN: sign(-0.0) is -0.0 (numpy's sign gives +0.0).
    return np.where(np.isnan(x), x, np.copysign((x != 0).astype(x.dtype), x))


def _round_afz(x: np.ndarray) -> np.ndarray:
    """Round half away from zero without the x + 0.5 double-rounding trap."""
    truncated = np.trunc(x)
    fraction = x - truncated  # exact
    return np.where(np.abs(fraction) >= 0.5, truncated + np.copysign(np.ones_like(x), x),
                    truncated)


def _cbrt(x: np.ndarray) -> np.ndarray:
    # numpy's f32 cbrt is off by an ulp even on cubes (27 -> 2.9999998); f64 then round.
    return np.cbrt(x.astype(np.float64)).astype(x.dtype) if x.dtype == F32 else np.cbrt(x)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


def _logistic(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    return one / (one + np.exp(-x))


_erf64 = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf; math.erf in f64 then rounded is as exact as std::erf in f32.
    return np.asarray(_erf64(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def _complex_sign(x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude)).astype(x.dtype)


# -- integer helpers ----------------------------------------------------------------------


def _signed_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Truncating division; x / 0 = -1; INT_MIN / -1 = INT_MIN (numpy floors and warns)."""
    zero = y == 0
    safe = np.where(zero, 1, y).astype(y.dtype)
    quotient = np.floor_divide(x, safe)
    remainder = x - quotient * safe
    quotient = quotient + ((remainder != 0) & ((x < 0) != (safe < 0))).astype(x.dtype)
    return np.where(zero, np.array(-1, x.dtype), quotient)


def _unsigned_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    zero = y == 0
    quotient = np.floor_divide(x, np.where(zero, 1, y).astype(y.dtype))
    return np.where(zero, np.array(np.iinfo(x.dtype).max, x.dtype), quotient)


def _integer_remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Remainder with the dividend's sign; x % 0 = x; INT_MIN % -1 = 0."""
    zero = y == 0
    safe = np.where(zero, 1, y).astype(y.dtype)
    if x.dtype.kind == "i":
        safe = np.where(safe == -1, 1, safe).astype(y.dtype)  # x % -1 == 0 == x % 1
    return np.where(zero, x, np.fmod(x, safe))


def _integer_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Wrapping power; negative exponents give 1 for base 1, +-1 for base -1, else 0."""
    negative = y < 0 if y.dtype.kind == "i" else np.zeros(np.shape(y), bool)
    exponent = np.where(negative, 0, y).astype(y.dtype)
    result = np.power(x, exponent)
    if negative.any():
        odd = (y & 1) == 1
        minus_one = np.where(odd, -1, 1).astype(x.dtype)
        inverse = np.where(x == 1, 1, np.where(x == -1, minus_one, 0)).astype(x.dtype)
        result = np.where(negative, inverse, result)
    return result


def _bits(dtype: np.dtype) -> int:
    return 8 * dtype.itemsize


def _out_of_range(y: np.ndarray, width: int) -> np.ndarray:
    return y.astype(dtypes.uint_of_size(y.dtype.itemsize)) >= width


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = _bits(x.dtype)
    unsigned = dtypes.uint_of_size(x.dtype.itemsize)
    big = _out_of_range(y, width)
    amount = np.where(big, 0, y).astype(unsigned)
    shifted = np.left_shift(x.astype(unsigned), amount).astype(x.dtype)
    return np.where(big, np.zeros((), x.dtype), shifted)


def _shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = _bits(x.dtype)
    unsigned = dtypes.uint_of_size(x.dtype.itemsize)
    big = _out_of_range(y, width)
    amount = np.where(big, 0, y).astype(unsigned)
    shifted = np.right_shift(x.astype(unsigned), amount).astype(x.dtype)
    return np.where(big, np.zeros((), x.dtype), shifted)


def _shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = _bits(x.dtype)
    signed = dtypes.int_of_size(x.dtype.itemsize)
    big = _out_of_range(y, width)
    amount = np.where(big, width - 1, y).astype(signed)
    return np.right_shift(x.astype(signed), amount).astype(x.dtype)


_POPCOUNT_BYTE = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(x: np.ndarray) -> np.ndarray:
    # Flattened first: numpy cannot view a 0-d array as bytes (a scalar popcnt is common).
    flat = dtypes.contiguous(np.asarray(x)).reshape(-1)
    as_bytes = flat.view(np.uint8).reshape(flat.size, x.dtype.itemsize)
    counts = _POPCOUNT_BYTE[as_bytes].sum(axis=-1, dtype=np.int64).astype(x.dtype)
    return counts.reshape(np.shape(x))


def _count_leading_zeros(x: np.ndarray) -> np.ndarray:
    width = _bits(x.dtype)
    value = dtypes.contiguous(x).view(dtypes.uint_of_size(x.dtype.itemsize)).astype(np.uint64)
    count = np.full(np.shape(x), width, np.int64)
    step = width // 2
    while step:  # binary search for the highest set bit
        high = value >> np.uint64(step)
        has_high = high != 0
        count = count - np.where(has_high, step, 0)
        value = np.where(has_high, high, value)
        step //= 2
    return (count - (value != 0)).astype(x.dtype)


# -- the tables ---------------------------------------------------------------------------


def _same(x: np.ndarray) -> np.ndarray:
    return x


UNARY: dict[str, dict[str, Fn | None]] = {
    "abs": _kinds(np.abs, np.abs, _same, _same, np.abs),
    "negate": _kinds(np.negative, np.negative, np.negative, _same, np.negative),
    "sign": _kinds(_float_sign, np.sign, np.sign, _same, _complex_sign),
    "not": _kinds(None, np.invert, np.invert, np.logical_not),
    "floor": _kinds(np.floor),
    "ceil": _kinds(np.ceil),
    "round-nearest-afz": _kinds(_round_afz),
    "round-nearest-even": _kinds(np.rint),
    "sqrt": _kinds(np.sqrt, complex_=np.sqrt),
    "rsqrt": _kinds(_rsqrt, complex_=_rsqrt),
    "cbrt": _kinds(_cbrt),
    "exponential": _kinds(np.exp, complex_=np.exp),
    "exponential-minus-one": _kinds(np.expm1, complex_=np.expm1),
    "log": _kinds(np.log, complex_=np.log),
    "log-plus-one": _kinds(np.log1p, complex_=np.log1p),
    "logistic": _kinds(_logistic, complex_=_logistic),
    "sine": _kinds(np.sin, complex_=np.sin),
    "cosine": _kinds(np.cos, complex_=np.cos),
    "tan": _kinds(np.tan, complex_=np.tan),
    "tanh": _kinds(np.tanh, complex_=np.tanh),
    "erf": _kinds(_erf),
    "is-finite": _kinds(np.isfinite),
    "popcnt": _kinds(None, _popcount, _popcount),
    "count-leading-zeros": _kinds(None, _count_leading_zeros, _count_leading_zeros),
    "real": _kinds(_same, complex_=np.real),
    "imag": _kinds(np.zeros_like, complex_=np.imag),
}

BINARY: dict[str, dict[str, Fn | None]] = {
    "add": _kinds(np.add, np.add, np.add, np.logical_or, np.add),
    "subtract": _kinds(np.subtract, np.subtract, np.subtract, np.not_equal, np.subtract),
    "multiply": _kinds(np.multiply, np.multiply, np.multiply, np.logical_and, np.multiply),
    "divide": _kinds(np.divide, _signed_divide, _unsigned_divide,
                     lambda x, y: x | ~y, np.divide),
    "remainder": _kinds(np.fmod, _integer_remainder, _integer_remainder, lambda x, y: x & ~y),
    "maximum": _kinds(float_maximum, np.maximum, np.maximum, np.logical_or),
    "minimum": _kinds(float_minimum, np.minimum, np.minimum, np.logical_and),
    "power": _kinds(np.power, _integer_power, _integer_power, lambda x, y: x | ~y, np.power),
    "atan2": _kinds(np.arctan2),
    "and": _kinds(None, np.bitwise_and, np.bitwise_and, np.logical_and),
    "or": _kinds(None, np.bitwise_or, np.bitwise_or, np.logical_or),
    "xor": _kinds(None, np.bitwise_xor, np.bitwise_xor, np.logical_xor),
    "shift-left": _kinds(None, _shift_left, _shift_left),
    "shift-right-logical": _kinds(None, _shift_right_logical, _shift_right_logical),
    "shift-right-arithmetic": _kinds(None, _shift_right_arithmetic, _shift_right_arithmetic),
}

def binary_function(opcode: str, dtype: np.dtype) -> Fn:
    """The function `opcode` applies to two arrays of `dtype` (narrow floats rounded back)."""
    kind = kind_of(dtype)
    function = BINARY[opcode][kind]
    if function is None:
        raise _unsupported_type(opcode, dtype)
    if kind != "narrow":
        return function
    inner = function
    return lambda x, y: _finish(inner(cast(x, F32), cast(y, F32)), dtype)


for _opcode, _table in UNARY.items():
    handles(_opcode, elementwise=True)(unary(_table))
for _opcode, _table in BINARY.items():
    handles(_opcode, elementwise=True)(binary(_table))


# -- ops with attributes or mixed types ---------------------------------------------------

_DIRECTIONS: dict[str, Fn] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}


def compare_values(x: np.ndarray, y: np.ndarray, direction: str,
                   comparison_type: str | None) -> np.ndarray:
    """`compare` on two arrays of one element type (also used to recognize comparators)."""
    function = _DIRECTIONS.get(direction)
    if function is None:
        raise Unsupported(f"compare direction {direction}")
    kind = kind_of(x.dtype)
    if kind == "complex":
        if direction not in ("EQ", "NE"):
            raise Unsupported(f"compare {direction} on complex")
        return function(x, y)
    if kind in ("float", "narrow"):
        if comparison_type == "TOTALORDER":
            return function(dtypes.total_order_key(x), dtypes.total_order_key(y))
        if kind == "narrow":
            return function(cast(x, F32), cast(y, F32))
        return function(x, y)
    if comparison_type == "UNSIGNED" and kind == "signed":
        unsigned = dtypes.uint_of_size(x.dtype.itemsize)
        return function(x.view(unsigned), y.view(unsigned))
    if comparison_type == "SIGNED" and kind == "unsigned":
        signed = dtypes.int_of_size(x.dtype.itemsize)
        return function(x.view(signed), y.view(signed))
    return function(x, y)


@handles("compare", elementwise=True)
def compare(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    x, y = operands
    return compare_values(np.asarray(x), np.asarray(y), instruction.comparison_direction or "",
                          instruction.comparison_type)


@handles("select", elementwise=True)
def select(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    predicate, on_true, on_false = operands
    if isinstance(on_true, tuple):
        raise Unsupported("select of tuples")
    return np.where(predicate, on_true, on_false)


@handles("clamp", elementwise=True)
def clamp(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    low, x, high = operands
    kind = kind_of(x.dtype)
    if kind == "complex":
        raise _unsupported_type("clamp", x.dtype)
    if kind in ("float", "narrow"):
        work = [cast(np.asarray(v), F32) if kind == "narrow" else v for v in (low, x, high)]
        result = float_minimum(work[2], float_maximum(work[1], work[0]))
        return _finish(result, x.dtype)
    return np.minimum(high, np.maximum(x, low))


@handles("convert", elementwise=True)
def convert(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return dtypes.convert(np.asarray(operands[0]),
                          dtypes.dtype_of(instruction.shape.element_type))


@handles("bitcast-convert", bit_exact=True)
def bitcast_convert(interpreter: object, instruction: Instruction,
                    operands: list[Value]) -> Value:
    return dtypes.bitcast_convert(np.asarray(operands[0]),
                                  dtypes.dtype_of(instruction.shape.element_type))


@handles("complex", elementwise=True)
def make_complex(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    real, imag = np.broadcast_arrays(*operands)
    result = np.empty(real.shape, dtypes.dtype_of(instruction.shape.element_type))
    result.real = real
    result.imag = imag
    return result


@handles("reduce-precision", elementwise=True, bit_exact=True)
def reduce_precision(interpreter: object, instruction: Instruction,
                     operands: list[Value]) -> Value:
    x = np.asarray(operands[0])
    kind = kind_of(x.dtype)
    if kind not in ("float", "narrow"):
        raise _unsupported_type("reduce-precision", x.dtype)
    if instruction.exponent_bits is None or instruction.mantissa_bits is None:
        raise Unsupported("reduce-precision without exponent_bits/mantissa_bits")
    work = cast(x, F32) if kind == "narrow" else x
    result = reduce_precision_bits(work, instruction.exponent_bits, instruction.mantissa_bits)
    return _finish(result, x.dtype)


def reduce_precision_bits(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """Round to `mantissa_bits` (ties to even), flush what the exponent cannot hold to zero
    or infinity (XLA's reduce-precision, bit for bit; denormals of the target flush to 0)."""
    unsigned = dtypes.uint_of_size(x.dtype.itemsize)
    width = 8 * x.dtype.itemsize
    source_mantissa = 23 if width == 32 else 52
    source_exponent = width - source_mantissa - 1

    def u(value: int) -> np.ndarray:
        return np.array(value, unsigned)

    bits = dtypes.contiguous(x).view(unsigned)
    if mantissa_bits < source_mantissa:
        shift = source_mantissa - mantissa_bits
        last_bit = 1 << shift
        bias = (last_bit >> 1) - 1
        last = (bits & u(last_bit)) >> u(shift)
        mask = ((1 << width) - 1) ^ (last_bit - 1)
        bits = (bits + last + u(bias)) & u(mask)
    if exponent_bits < source_exponent:
        sign_mask = 1 << (width - 1)
        exponent_mask = ((1 << source_exponent) - 1) << source_mantissa
        exponent_bias = (1 << (source_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & u(exponent_mask)
        overflows = exponent > u((exponent_bias + reduced_bias) << source_mantissa)
        underflows = exponent <= u((exponent_bias - reduced_bias) << source_mantissa)
        signed_zero = bits & u(sign_mask)
        signed_inf = signed_zero | u(exponent_mask)
        bits = np.where(overflows, signed_inf, bits)
        bits = np.where(underflows, signed_zero, bits)
    result = np.asarray(bits).view(x.dtype)
    nan_value = x if mantissa_bits > 0 else np.array(np.inf, x.dtype)
    return np.where(np.isnan(x), nan_value, result)

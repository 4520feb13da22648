"""`rng-bit-generator`: XLA's counter-based generators, bit for bit.

XLA's CPU and GPU compilers expand the op with RngBitGeneratorExpander into the ThreeFry-2x32
(20 rounds) and Philox-4x32-10 constructions of its prng library; `rng_default` is Philox
there. The state operand is u64[2] for ThreeFry (key, counter) and u64[2] or u64[3] for
Philox (key, then the 128-bit counter: low, high; with u64[2] the counter's high word is the
key). The result is (the state with its counter advanced by the blocks used, the bits).
Outputs narrower than 32 bits are the low bits of the 32-bit stream, as XLA makes them.

The stateful `rng` op draws from a process-wide seed, so a replay cannot reproduce it: it
stays `unsupported: rng`.
"""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.registry import Value, handles

U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)

_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_THREEFRY_PARITY = np.uint32(0x1BD11BDA)

_PHILOX_MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_PHILOX_KEY_STEPS = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
_PHILOX_ROUNDS = 10

_SHIFT32 = np.uint64(32)


def _low(x: np.ndarray) -> np.ndarray:
    return x.astype(U32)


def _high(x: np.ndarray) -> np.ndarray:
    return (x >> _SHIFT32).astype(U32)


def _join(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return low.astype(U64) | (high.astype(U64) << _SHIFT32)


# -- ThreeFry-2x32 --------------------------------------------------------------------------


def _rotate_left(v: np.ndarray, distance: int) -> np.ndarray:
    return (v << np.uint32(distance)) | (v >> np.uint32(32 - distance))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, key: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """Five groups of four rounds, a key injection after each (Salmon et al., SC 2011)."""
    k0, k1 = np.uint32(int(key) & 0xFFFFFFFF), np.uint32(int(key) >> 32)
    schedule = (k0, k1, _THREEFRY_PARITY ^ k0 ^ k1)
    x0 = x0 + k0
    x1 = x1 + k1
    for group in range(5):
        for distance in _THREEFRY_ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = x0 ^ _rotate_left(x1, distance)
        x0 = x0 + schedule[(group + 1) % 3]
        x1 = x1 + schedule[(group + 2) % 3] + np.uint32(group + 1)
    return x0, x1


def _threefry_split(dims: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """XLA's SplitShapeIntoHalves: the first even dimension, else the largest, is halved
    (rounding up); the two halves of the output interleave along it."""
    if not dims:
        return 0, (1,)
    even = [i for i, d in enumerate(dims) if d % 2 == 0]
    axis = even[0] if even else max(range(len(dims)), key=lambda i: (dims[i], -i))
    half = list(dims)
    half[axis] = (dims[axis] + 1) // 2
    return axis, tuple(half)


def threefry_bits32(key: np.uint64, counter: np.uint64,
                    dims: tuple[int, ...]) -> tuple[np.ndarray, np.uint64]:
    axis, half = _threefry_split(dims)
    count = int(np.prod(half, dtype=np.int64))
    inputs = counter + np.arange(count, dtype=U64)
    out0, out1 = threefry2x32(_low(inputs), _high(inputs), key)
    new_counter = counter + np.uint64(count)
    if not dims:
        return out0.reshape(()), new_counter
    pairs = np.stack([out0.reshape(half), out1.reshape(half)], axis=axis + 1)
    joined = list(half)
    joined[axis] *= 2
    result = pairs.reshape(joined)
    return result[tuple(slice(0, d) for d in dims)], new_counter


def threefry_bits64(key: np.uint64, counter: np.uint64,
                    dims: tuple[int, ...]) -> tuple[np.ndarray, np.uint64]:
    count = int(np.prod(dims, dtype=np.int64))
    inputs = counter + np.arange(count, dtype=U64)
    out0, out1 = threefry2x32(_low(inputs), _high(inputs), key)
    return _join(out0, out1).reshape(dims), counter + np.uint64(count)


# -- Philox-4x32-10 -------------------------------------------------------------------------


def philox4x32(words: list[np.ndarray], key: np.uint64) -> list[np.ndarray]:
    k0, k1 = np.uint32(int(key) & 0xFFFFFFFF), np.uint32(int(key) >> 32)
    x0, x1, x2, x3 = words
    for _ in range(_PHILOX_ROUNDS):
        product0 = x0.astype(U64) * _PHILOX_MULTIPLIERS[0]
        product1 = x2.astype(U64) * _PHILOX_MULTIPLIERS[1]
        x0, x1, x2, x3 = (_high(product1) ^ x1 ^ k0, _low(product1),
                          _high(product0) ^ x3 ^ k1, _low(product0))
        k0 = k0 + _PHILOX_KEY_STEPS[0]
        k1 = k1 + _PHILOX_KEY_STEPS[1]
    return [x0, x1, x2, x3]


def philox_blocks(key: np.uint64, low: np.uint64, high: np.uint64,
                  blocks: int) -> tuple[list[np.ndarray], np.uint64, np.uint64]:
    """`blocks` 128-bit outputs from counters (high:low) + 0, 1, ...; the advanced counter."""
    steps = np.arange(blocks, dtype=U64)
    lows = low + steps
    highs = high + (lows < low).astype(U64)  # carry into the high word
    words = philox4x32([_low(lows), _high(lows), _low(highs), _high(highs)], key)
    new_low = low + np.uint64(blocks)
    new_high = high + np.uint64(1 if new_low < low else 0)
    return words, new_low, new_high


def philox_bits(key: np.uint64, low: np.uint64, high: np.uint64, dims: tuple[int, ...],
                width: int) -> tuple[np.ndarray, np.uint64, np.uint64]:
    """32- or 64-bit words, taken round-robin from each block's four (or two) outputs."""
    count = int(np.prod(dims, dtype=np.int64))
    per_block = 4 if width == 32 else 2
    blocks = -(-count // per_block)
    words, new_low, new_high = philox_blocks(key, low, high, blocks)
    if width == 64:
        words = [_join(words[0], words[1]), _join(words[2], words[3])]
    numbers = np.stack(words, axis=1).reshape(-1)[:count]
    return numbers.reshape(dims), new_low, new_high


# -- the op ---------------------------------------------------------------------------------

_ALGORITHMS = {"rng_default": "philox", "rng_philox": "philox", "rng_three_fry": "three_fry"}


def generate(algorithm: str, state: np.ndarray, dims: tuple[int, ...],
             dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(new state, bits of `dtype` shaped `dims`) as XLA's expansion computes them."""
    name = _ALGORITHMS.get(algorithm)
    if name is None:
        raise Unsupported(f"rng-bit-generator algorithm {algorithm}")
    if dtype.kind != "u" or dtype.itemsize not in (1, 2, 4, 8):
        raise Unsupported(f"rng-bit-generator of {dtype}")
    if state.dtype != U64 or state.ndim != 1:
        raise EvaluationError(f"rng-bit-generator state must be u64[n], got {state.dtype}")
    width = 64 if dtype.itemsize == 8 else 32
    key = state[0]
    if name == "three_fry":
        if state.shape[0] != 2:
            raise Unsupported(f"three_fry rng-bit-generator with a u64[{state.shape[0]}] state")
        make = threefry_bits64 if width == 64 else threefry_bits32
        bits, counter = make(key, state[1], dims)
        new_state = np.array([key, counter], U64)
    else:
        if state.shape[0] == 2:
            low, high = state[1], state[0]
        elif state.shape[0] == 3:
            low, high = state[1], state[2]
        else:
            raise Unsupported(f"philox rng-bit-generator with a u64[{state.shape[0]}] state")
        bits, new_low, new_high = philox_bits(key, low, high, dims, width)
        words = [key, new_low] if state.shape[0] == 2 else [key, new_low, new_high]
        new_state = np.array(words, U64)
    return new_state, bits.astype(dtype)  # narrow types keep the low bits, as XLA's convert


@handles("rng-bit-generator")
def rng_bit_generator(interpreter: object, instruction: Instruction,
                      operands: list[Value]) -> Value:
    shape = instruction.shape
    if not shape.is_tuple or len(shape.tuple_shapes) != 2:
        raise EvaluationError(f"{instruction.name}: rng-bit-generator must return a pair")
    output = shape.tuple_shapes[1]
    return generate(instruction.rng_algorithm or "rng_default", np.asarray(operands[0]),
                    output.dims, dtypes.dtype_of(output.element_type))

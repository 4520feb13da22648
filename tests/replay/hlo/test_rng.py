"""rng-bit-generator against bits XLA's CPU backend produced (jaxlib 0.10.2, the HLO below run
as written): ThreeFry and Philox, odd shapes, 64-bit and narrow outputs, counter carries."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.helpers.hlo_builders import assert_same, run
from workbench.hlo_ir import Shape
from workbench.replay.errors import Unsupported

NUMPY = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}

# (algorithm, state, output type, output dims, state after, bits in row-major order)
XLA_CPU = [
    ("rng_three_fry", [0x123456789ABCDEF, 0x2A], "u32", (5,), [0x123456789ABCDEF, 0x2D],
     [0x892C25C1, 0x93887604, 0x2E2C389, 0x7403A6BB, 0xF72BAAFD]),
    # odd dims: the largest dimension is split; the counter wraps past 2^64
    ("rng_three_fry", [0x7, 0xFFFFFFFFFFFFFFFE], "u32", (3, 3), [0x7, 0x4],
     [0xC423DD97, 0xD03E9607, 0xE892296A, 0xA14FABEA, 0x5F522293, 0xBC3B53B9, 0xB0B8A12F,
      0x184F8EB1, 0x2B8F90B4]),
    ("rng_three_fry", [0x1, 0x2], "u64", (3,), [0x1, 0x5],
     [0x802FD53B0296E954, 0xDF435003ED3492D3, 0xFCC0F26163B40BD3]),
    ("rng_three_fry", [0x5, 0x9], "u16", (2, 3), [0x5, 0xC],
     [0xF71, 0x292, 0xB7D7, 0xD2A, 0x6AA2, 0xAA7B]),
    ("rng_philox", [0x123456789ABCDEF, 0x2A, 0x7], "u32", (5,), [0x123456789ABCDEF, 0x2C, 0x7],
     [0xDB4C0F71, 0x523AF986, 0xF28C9E46, 0xC6867A86, 0x9E5BBC0C]),
    # the 128-bit counter carries into its high word
    ("rng_philox", [0x3, 0xFFFFFFFFFFFFFFFF, 0x0], "u64", (3,), [0x3, 0x1, 0x1],
     [0x43ED309F8A32F6D5, 0x2EAA5F7BE834349C, 0xEE40AD4B346397C5]),
    # a u64[2] state: the counter's high word is the key
    ("rng_philox", [0xB, 0xD], "u32", (2, 3), [0xB, 0xF],
     [0x4C5B62C, 0xF00CC5CE, 0xBE4D5B62, 0x64B621A4, 0x1F0D0462, 0x4538E977]),
    # the default algorithm is Philox on CPU; u8 keeps the low bits of the u32 stream
    ("rng_default", [0xB, 0xD], "u8", (6,), [0xB, 0xF], [0x2C, 0xCE, 0x62, 0xA4, 0x62, 0x77]),
]


def generate(algorithm: str, state: list[int], type_name: str, dims: tuple[int, ...]) -> tuple:
    state_shape = Shape("u64", (len(state),))
    shape = Shape("tuple", tuple_shapes=(state_shape, Shape(type_name, dims)))
    return run("rng-bit-generator", shape, np.array(state, np.uint64), rng_algorithm=algorithm)


@pytest.mark.parametrize(("algorithm", "state", "type_name", "dims", "new_state", "bits"),
                         XLA_CPU)
def test_bits_as_xla_cpu_makes_them(algorithm: str, state: list[int], type_name: str,
                                    dims: tuple[int, ...], new_state: list[int],
                                    bits: list[int]) -> None:
    got_state, got_bits = generate(algorithm, state, type_name, dims)
    assert_same(got_state, np.array(new_state, np.uint64))
    assert_same(got_bits, np.array(bits, NUMPY[type_name]).reshape(dims))


def test_same_state_same_bits_next_state_new_bits() -> None:
    first_state, first = generate("rng_three_fry", [9, 0], "u32", (4,))
    _, again = generate("rng_three_fry", [9, 0], "u32", (4,))
    _, second = generate("rng_three_fry", [int(x) for x in first_state], "u32", (4,))
    assert_same(again, first)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize(("algorithm", "state", "type_name", "message"), [
    ("rng_three_fry", [1, 2, 3], "u32", "three_fry rng-bit-generator with a u64[3] state"),
    ("rng_philox", [1, 2, 3, 4], "u32", "philox rng-bit-generator with a u64[4] state"),
    ("rng_philox", [1, 2], "s32", "rng-bit-generator of int32"),
    ("rng_philox", [1, 2], "f32", "rng-bit-generator of float32"),
])
def test_what_xla_does_not_define_is_unsupported(algorithm: str, state: list[int],
                                                 type_name: str, message: str) -> None:
    with pytest.raises(Unsupported, match=f"^unsupported: {re.escape(message)}$"):
        generate(algorithm, state, type_name, (4,))

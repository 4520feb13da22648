"""Random rounding: the draws (fixed seeds, so every run and machine draws the same), a value
moved by a random fraction of one ulp of its declared type, and the spread of a dot that
accumulates in a type narrower than f32."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.hlo_ir import Instruction
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.hlo.registry import Handler

SEED = 20261126
ACCUMULATION_BLOCKS = 8  # partial sums of a dot that accumulates in its narrow declared type
POOL = 1 << 20  # uniform draws each random rounding reads a window of (`Draws`)


class Draws:
    """Random rounding's draws: for each rounding, a window at a random offset into one pool
    of `POOL` uniform numbers in [-1, 1) (drawn once, from a fixed seed); an array larger
    than the pool takes one window per `POOL` elements, each at its own offset (`move`,
    `flip`). Drawing afresh for every element had cost more than the evaluation itself (at
    GPT-2's size, a third of a sample's time); windows at independent offsets keep the
    elements of one window independent, and two windows' elements independent unless their
    offsets meet."""

    def __init__(self) -> None:
        self.units = np.random.default_rng((SEED, POOL)).random(POOL)
        self.units *= 2.0
        self.units -= 1.0
        self.factors_by_eps: dict[float, np.ndarray] = {}
        self.sign_pool: np.ndarray | None = None
        self.rng = np.random.default_rng(SEED)

    def reseed(self, sample: int) -> None:
        self.rng = np.random.default_rng((SEED, sample))

    def _window(self, pool: np.ndarray, shape: tuple[int, ...], size: int) -> np.ndarray:
        if size > POOL:
            raise ValueError(f"{size} draws at once: more than the pool holds (`move`, `flip`)")
        start = int(self.rng.integers(0, POOL - size + 1))
        return pool[start:start + size].reshape(shape)

    def factors(self, shape: tuple[int, ...], eps: float) -> np.ndarray:
        """`1 + u eps` for each element, `u` uniform in [-1, 1), for at most `POOL` elements
        (a larger array is `move`d)."""
        size = math.prod(shape)  # not np.prod: this runs once per rounding op
        pool = self.factors_by_eps.get(eps)
        if pool is None:
            pool = self.factors_by_eps[eps] = 1.0 + eps * self.units
        return self._window(pool, shape, size)

    def signs(self, shape: tuple[int, ...]) -> np.ndarray:
        """-1 or +1 for each element (f32), each with probability 1/2, for at most `POOL`
        elements (a larger array is `flip`ped): a multiply, where a masked negation cost
        five times as much."""
        size = math.prod(shape)
        if self.sign_pool is None:
            self.sign_pool = np.where(self.units < 0.0, -1.0, 1.0).astype(np.float32)
        return self._window(self.sign_pool, shape, size)

    def move(self, array: np.ndarray, eps: float, out: np.ndarray | None = None) -> None:
        """`array` times `1 + u eps` at each element, into `out` (of its shape and layout; by
        default `array` itself, which must then be writable)."""
        self._times(array, lambda size: self.factors((size,), eps), out)

    def flip(self, array: np.ndarray) -> None:
        """`array` (writable) times -1 or +1 at each element, in place."""
        self._times(array, lambda size: self.signs((size,)))

    def _times(self, array: np.ndarray, window: Callable[[int], np.ndarray],
               out: np.ndarray | None = None) -> None:
        """`array` times a window per `POOL` of its elements into `out` (`array` itself by
        default), in memory order where both are one block alike (no array of factors),
        else through the factors whole, in the array's shape."""
        out = array if out is None else out
        flat, into = array.ravel(order="K"), out.ravel(order="K")
        if not (np.shares_memory(flat, array) and np.shares_memory(into, out)
                and array.strides == out.strides):  # strided: the factors, whole
            factors = np.concatenate([window(min(POOL, array.size - start))
                                      for start in range(0, array.size, POOL)])
            np.multiply(array, factors.reshape(array.shape), out=out, casting="unsafe")
            return
        for start in range(0, flat.size, POOL):
            np.multiply(flat[start:start + POOL], window(min(POOL, flat.size - start)),
                        out=into[start:start + POOL], casting="unsafe")


def randomly_rounded(draws: Draws, value: np.ndarray, eps: float,
                     in_place: bool = False) -> np.ndarray:
    """`value * (1 + u)` with `u` uniform in [-eps, eps), in `value`'s type (in `value`
    itself when `in_place`: an op's fresh result, owned by no one else)."""
    if value.size > POOL:  # window by window (`Draws.move`), into a new array unless fresh
        moved = value if in_place and value.flags.writeable else np.empty_like(value)
        draws.move(value, eps, out=moved)
        return moved
    factors = draws.factors(value.shape, eps)
    if in_place and value.dtype.kind == "f":
        return np.multiply(value, factors, out=value, casting="unsafe")
    return (value * factors).astype(value.dtype, copy=False)


def in_f32(handler: Handler, interpreter: Interpreter, instruction: Instruction,
           lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The dot of the f64 shadow computed in f32, returned in f64."""
    if instruction.shape.element_type != "f64" or lhs.dtype != np.float64 \
            or rhs.dtype != np.float64:
        return np.asarray(handler(interpreter, instruction, [lhs, rhs]))
    narrow = replace(instruction, shape=replace(instruction.shape, element_type="f32"))
    value = handler(interpreter, narrow, [lhs.astype(np.float32), rhs.astype(np.float32)])
    return np.asarray(value).astype(np.float64)


def accumulation_spread(handler: Handler, interpreter: Interpreter, instruction: Instruction,
                        lhs: np.ndarray, rhs: np.ndarray, eps: float
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact dot and the spread of its accumulation in a type of `eps`
    (`noisy_interpreter._accumulating`),
    or None when the longest contracted dimension has fewer than two elements."""
    numbers = instruction.dot_dimension_numbers
    assert numbers is not None
    pairs = list(zip(numbers.lhs_contracting_dims, numbers.rhs_contracting_dims, strict=True))
    k = int(np.prod([lhs.shape[d] for d, _ in pairs], dtype=np.int64))
    left, right = max(pairs, key=lambda pair: lhs.shape[pair[0]])  # split the longest
    blocks = min(lhs.shape[left], ACCUMULATION_BLOCKS)
    if blocks < 2:
        return None
    total: np.ndarray | None = None
    squares: np.ndarray | None = None
    bounds = np.linspace(0, lhs.shape[left], blocks + 1).astype(int)
    for start, stop in pairwise(bounds):  # in place: these are the stage's largest arrays
        partial = np.asarray(handler(interpreter, instruction, [
            _part(lhs, left, start, stop), _part(rhs, right, start, stop)]))
        if total is None:
            total, squares, scratch = partial, np.square(partial), np.empty_like(partial)
        else:
            total += partial
            squares += np.square(total, out=scratch)
    assert total is not None and squares is not None
    squares *= k / blocks
    spread = np.sqrt(squares, out=squares)
    spread *= eps / 2
    return total, spread


def _part(array: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    """`array[start:stop]` along `axis`, a view."""
    index = [slice(None)] * array.ndim
    index[axis] = slice(start, stop)
    return array[tuple(index)]

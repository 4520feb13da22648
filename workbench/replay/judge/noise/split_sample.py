"""Rounding noise inside a program: the reference evaluated with random rounding.

A bound computed at the output from the reference's own rounding cannot see rounding noise
that crosses a discontinuity inside the program: AdamW's first update is `lr * sign(g)`, and
where `g` nearly cancels, legal rounding flips its sign, so the update moves by `2 lr`. This is
Monte Carlo arithmetic's *random rounding* (as CESTAC/CADNA and Verificarlo use it): the f64
shadow of the reference is evaluated `SAMPLES` times, and each rounding operation's result is
moved by a random fraction (-1 to 1) of one ulp of the type it is declared in, the rounding its
own precision allows (a convert to bf16 by a bf16 ulp, an f32 add by an f32 ulp). The seeds are
fixed, so the samples are the same on every run and machine.

Where a sample lands on the other side of a discontinuity (compare, sign, floor/ceil/round,
convert to an integer or pred, sort, a variadic reduce such as argmax) everything downstream of
that element takes the other side's value in that sample too: the samples' spread per element
is the noise, large exactly downstream of such an element and about the rounding elsewhere.
A domain boundary is such a discontinuity too: `sqrt`, `log` or `pow` of an operand within
rounding of it is NaN in some samples and finite in others (AdamW's second moment near 0
on random data), so a float result whose NaN-ness differs between samples flips as well.
Random samples rarely land a value that is within its noise of a threshold on its other side,
yet real XLA may (its bf16 sums stray further than one rounding). A last, deterministic *split
sample* goes there: the f64 reference without random rounding, where a float compare whose
operands are within `REACH` times their samples' spread of each other answers the other way,
floor, ceil, round and a convert to an integer whose operand is that near a step answer from
its other side, a sort, top-k or argmax whose keys nearly tie runs with them swapped, and a
value whose sign a decided steep op follows (AdamW's
m / (sqrt(v) + eps)) is moved across zero where it is made (`split_candidates`).

`Noise` keeps the per-element range of the samples (not the samples), where some sample was
NaN, and the discontinuities whose outputs differed between samples or that the split sample
moved, by instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, LiteralValue, Shape
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.registry import ELEMENTWISE, Handler, Value
from workbench.replay.processes.memory import return_freed_memory

SAMPLES = 12  # random-rounding evaluations of the reference
SEED = 20261126

# Ops with a tuple of float results, each rounded once to its type (`_rounding_parts`): the
# batch-norm family, whose statistics and normalized values XLA's batchnorm_expander computes
# with reductions and elementwise ops in the operand's type.
_ROUNDED_TUPLES = frozenset(("batch-norm-training", "batch-norm-grad"))

# Ops whose result is some operand's values moved or copied: they do not round.
_EXACT = frozenset(
    (
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "reshape",
        "broadcast",
        "transpose",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "concatenate",
        "pad",
        "copy",
        "gather",
        "scatter",
        "reverse",
        "select",
        "iota",
        "while",
        "conditional",
        "call",
        "fusion",
        "custom-call",
        "sort",
        "opt-barrier",
        "abs",
        "negate",
        "maximum",
        "minimum",
        "clamp",
        "real",
        "imag",
        "bitcast-convert",
        "reduce-precision",
        "stochastic-convert",
        "rng",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "sign",
        "after-all",
        "add-dependency",
        "map",
        "reduce",
        "reduce-window",
        "select-and-scatter",
        "all-reduce",
        "copy-start",
        "copy-done",
        "domain",
        "get-dimension-size",
        "set-dimension-size",
    )
)
# Ops whose result jumps where an operand crosses a threshold.
DISCONTINUOUS = frozenset(
    (
        "compare",
        "sign",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "convert",
        "sort",
        "topk",
        "reduce",
        "is-finite",
    )
)
_FLOAT_TYPES = frozenset(
    (
        "f16",
        "bf16",
        "f32",
        "f64",
        "c64",
        "c128",
        "f8e5m2",
        "f8e4m3fn",
        "f8e4m3b11fnuz",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "f8e4m3",
        "f8e3m4",
        "f4e2m1fn",
        "f8e8m0fnu",
    )
)


# How far past its samples' midpoint an operand may legally lie, in half ranges of its samples
# (as far as the verdict's bound lets a legal value stray: `error_bound.C`).
REACH = 4.0
# Ops whose result steps where the operand crosses an integer (a half-integer for round).
STEPS = frozenset(("floor", "ceil", "round-nearest-afz", "round-nearest-even"))
# Ops steep where an operand crosses zero: AdamW's m / (sqrt(v) + eps) is about sign(m).
STEEP_AT_ZERO = frozenset(("divide", "sign"))
ACCUMULATION_BLOCKS = 8  # partial sums of a dot that accumulates in its narrow declared type
_F32_EPS = float(np.finfo(np.float32).eps)
JUMP = 0.25  # a sample range beyond this fraction of an array's magnitude is a jump
# Where the split sample may move a value: all elements, and each steep op's share of them.
Candidate = tuple[np.ndarray, list[tuple[np.ndarray, tuple[str, str]]]]
# Most bytes kept only to name flips and jumps: integer values, and the ranges of values
# declared at most f32 wide in f32 (a jump is a quarter of the array's magnitude).
TRACKED_BYTES = 128 * 2**20
# Most bytes kept in all, what the split sample reads included: this share of the memory
# limit in force (`--memory-limit`; a quarter of the machine's memory by default).
NEEDED_SHARE = 0.25
RANGE_BYTES = 17  # what a value's range keeps per element: low and high in f64, a NaN mask
POOL = 1 << 20  # uniform draws each random rounding reads a window of (`_Draws`)
SPREAD_BYTES = 128 * 2**20  # most bytes of accumulation spreads kept for later samples


@dataclass(frozen=True)
class Discontinuity:
    """Where rounding noise inside the reference decides a value: a discontinuous instruction
    whose output differed between samples or that the split sample moved (`flipped`; for a
    value moved across zero, the steep op it answers to), or one whose samples jump across more
    than `JUMP` of its array's magnitude (the operand within its own noise; a steep function
    such as AdamW's first update g / (|g| + eps)); `elements` over all its runs."""

    name: str
    opcode: str
    computation: str
    op_name: str
    elements: int
    flipped: bool

    def __str__(self) -> str:
        where = f", {self.op_name}" if self.op_name else ""
        how = "flips" if self.flipped else "jumps"
        return f"{self.name} ({self.opcode}{where}) {how} at {self.elements} element(s)"


@dataclass
class Noise:
    """The samples' per-element range (`low`, `high`, in f64, with the reference's structure;
    NaN only where every sample was), where some random sample was NaN (`nan_seen`, boolean
    arrays; None for the non-float parts and when not known), where the noise decided values
    (discontinuities first, then jumps; each by how many elements, most first), and what the
    split sample could not cover within its memory budget (`left_out`, None when nothing)."""

    low: Any
    high: Any
    discontinuities: tuple[Discontinuity, ...] = ()
    nan_seen: Any = None
    left_out: str | None = None


def _eps(element_type: str) -> float:
    import ml_dtypes

    from workbench.replay.hlo.dtypes import dtype_of

    dtype = dtype_of(element_type)
    base = np.float32 if dtype == np.complex64 else np.float64 if dtype.kind == "c" else dtype
    return float(ml_dtypes.finfo(base).eps)


def _has_discrete(instruction: Instruction) -> bool:
    """Whether some array of the result is integer or pred (an argmax's index)."""
    shape = instruction.shape
    parts = shape.tuple_shapes if shape.is_tuple else (shape,)
    return any(p.is_array and p.element_type not in _FLOAT_TYPES for p in parts)


def _is_float(instruction: Instruction) -> bool:
    shape = instruction.shape
    return not shape.is_tuple and shape.element_type in _FLOAT_TYPES


@dataclass
class _Recorder:
    """Each discontinuity's outputs in the first sample and where later samples differ; each
    rounding op's range over the samples: what the split sample reads in f64 (within
    `needed_bytes` in all), the rest while within `TRACKED_BYTES`."""

    first: dict[tuple[str, str, int], Any] = field(default_factory=dict)
    first_nan: dict[tuple[str, str, int], np.ndarray | None] = field(default_factory=dict)
    nan_flips: dict[tuple[str, str], int] = field(default_factory=dict)
    differing: dict[tuple[str, str], int] = field(default_factory=dict)
    ranges: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    instructions: dict[tuple[str, str], Instruction] = field(default_factory=dict)
    occurrences: dict[tuple[str, str], int] = field(default_factory=dict)
    sample: int = 0
    tracked: int = 0  # bytes of all kept values
    named_only: int = 0  # bytes of those kept only to name flips and jumps
    # Kept beyond `TRACKED_BYTES` (up to `needed_bytes`): what the split sample reads.
    needed: set[tuple[str, str]] = field(default_factory=set)
    needed_bytes: int = 0
    left_out: int = 0  # values the split sample would read, not kept: beyond `needed_bytes`

    def occurrence(self, computation: str, instruction: Instruction) -> tuple[str, str, int]:
        key = (computation, instruction.name)
        occurrence = self.occurrences.get(key, 0)
        self.occurrences[key] = occurrence + 1
        if self.sample == 0:
            self.instructions.setdefault(key, instruction)
        return (*key, occurrence)

    def see(self, computation: str, instruction: Instruction, value: Value) -> None:
        key = self.occurrence(computation, instruction)
        parts = value if isinstance(value, tuple) else (value,)
        discrete = tuple(np.array(p, copy=True) for p in parts if np.asarray(p).dtype.kind in "biu")
        if not discrete:
            return
        if self.sample == 0:
            size = sum(part.nbytes for part in discrete)
            if self.named_only + size <= TRACKED_BYTES:
                self.tracked += size
                self.named_only += size
                self.first[key] = discrete
            return
        before = self.first.get(key)
        if before is None:
            return
        count = sum(int(np.count_nonzero(a != b)) for a, b in zip(before, discrete, strict=True))
        if count:
            self.differing[key[:2]] = max(self.differing.get(key[:2], 0), count)

    def see_float(self, computation: str, instruction: Instruction, value: np.ndarray,
                  eps: float) -> None:
        """Record a rounding op's sample `value` (declared with machine epsilon `eps`)."""
        key = self.occurrence(computation, instruction)
        if value.dtype.kind != "f":
            return
        known = self.ranges.get(key)
        if known is None:
            if self.sample != 0:
                return
            needed = key[:2] in self.needed
            kept = np.float32 if not needed and eps >= _F32_EPS else value.dtype
            size = value.size * (2 * np.dtype(kept).itemsize + 1)
            if needed and self.tracked + size > self.needed_bytes:
                self.left_out += 1
                return
            if not needed and self.named_only + size > TRACKED_BYTES:
                return
            self.tracked += size
            self.named_only += 0 if needed else size
            self.ranges[key] = (np.array(value, dtype=kept), np.array(value, dtype=kept))
            nans = np.isnan(value)
            self.first_nan[key] = nans if nans.any() else None
            return
        first_nan = self.first_nan[key]
        if first_nan is None and not np.isnan(np.add.reduce(value, axis=None)):
            count = 0  # no NaN then, none now: one pass rather than three
        else:
            now = np.isnan(value)
            count = int(np.count_nonzero(now if first_nan is None else now != first_nan))
        if count:  # a domain boundary (sqrt, log of an operand near 0) crossed by rounding
            self.nan_flips[key[:2]] = max(self.nan_flips.get(key[:2], 0), count)
        # In the range's own type: rounding is monotonic, so min(low, round(v)) is
        # round(min(low, v)), and an f32 range is then twice as fast as a mixed one.
        np.fmin(known[0], value, out=known[0], dtype=known[0].dtype)
        np.fmax(known[1], value, out=known[1], dtype=known[1].dtype)

    def latest_range(self, computation: str, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The samples' range of the latest value of `name` in `computation`, if tracked."""
        occurrence = self.occurrences.get((computation, name), 0) - 1
        return self.ranges.get((computation, name, occurrence))

    def jumps(self) -> dict[tuple[str, str], int]:
        """Elements whose sample range exceeds `JUMP` of their array's magnitude, by
        instruction, in the order the first sample made them (so operands come first)."""
        found: dict[tuple[str, str], int] = {}
        for (computation, name, _), (low, high) in self.ranges.items():
            with np.errstate(invalid="ignore", over="ignore"):
                magnitude = np.maximum(np.abs(low), np.abs(high))
                finite = np.isfinite(magnitude)
                if not np.any(finite):
                    continue
                scale = float(magnitude[finite].max())
                count = int(np.count_nonzero(finite & (high - low > JUMP * scale)))
            if count and scale > 0:
                found[(computation, name)] = found.get((computation, name), 0) + count
        return found


class _NoisyInterpreter(Interpreter):
    """Evaluates the f64 shadow with each rounding op's result moved by up to one ulp of its
    declared type, and reports the discontinuities' outputs to a recorder."""

    def __init__(
        self, shadow: HloModule, declared: dict[tuple[str, str], Instruction], recorder: _Recorder
    ) -> None:
        super().__init__(shadow)
        self.declared = declared
        self.recorder = recorder
        self.draws = _Draws()
        # Each accumulating dot's spread (`_accumulating`), by occurrence, from the first sample.
        self.spreads: dict[tuple[str, str, int], np.ndarray] = {}
        self.spread_bytes = 0
        self.splitting = False  # the split sample: no random rounding, values moved across
        self.candidates: dict[tuple[str, str, int], Candidate] = {}
        self.split: dict[tuple[str, str], int] = {}  # elements moved across, by steep op

    def reseed(self, sample: int) -> None:
        return_freed_memory()  # the last sample's intermediates: the next one's room
        self.draws.reseed(sample)
        self.recorder.sample = sample
        self.recorder.occurrences.clear()

    def release(self) -> None:
        """Drop the values kept for the samples now, not at the next garbage collection: the
        handlers' closures and the plans that hold them make a cycle with this interpreter,
        and the ranges it keeps are the stage's largest arrays."""
        self._plans.clear()
        self.spreads.clear()
        self.candidates = {}
        for kept in (self.recorder.first, self.recorder.first_nan, self.recorder.ranges):
            kept.clear()

    def start_split(self, candidates: dict[tuple[str, str, int], Candidate]) -> None:
        """The next evaluation is the split sample (`noise_of`): the f64 shadow, without random
        rounding, with the `candidates` (`split_candidates`) moved across zero where they are
        within their noise of it."""
        self.splitting = True
        self.candidates = candidates
        self.recorder.occurrences.clear()

    def _handler(self, computation: Any, instruction: Instruction, batched: bool) -> Handler:
        handler = super()._handler(computation, instruction, batched)
        original = self.declared.get((computation.name, instruction.name))
        if original is None:
            return handler
        if original.opcode in _ROUNDED_TUPLES and original.shape.is_tuple:
            return self._rounding_parts(handler, original)
        if original.opcode not in _EXACT and _is_float(original):
            eps = _eps(original.shape.element_type)
            if original.opcode == "dot" and eps > _F32_EPS:
                handler = _accumulating(handler, eps, self, None if batched else computation.name)
            return self._rounding(handler, eps, None if batched else computation.name)
        if original.opcode in DISCONTINUOUS and not batched and _has_discrete(original):
            return self._recording(handler, computation.name)
        if original.opcode in STEPS and not batched:
            return self._stepping(handler, computation.name)
        return handler

    def _rounding(self, handler: Handler, eps: float, computation: str | None) -> Handler:
        def rounded(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = np.asarray(handler(interpreter, instruction, operands))
            if self.splitting:
                if computation is None:
                    return value
                return self._across(self.recorder.occurrence(computation, instruction), value)
            if value.dtype.kind not in "fc":
                return value
            fresh = (value.flags.owndata and value.flags.writeable
                     and not any(value is operand for operand in operands))
            value = randomly_rounded(self.draws, value, eps, in_place=fresh)
            if computation is not None:
                self.recorder.see_float(computation, instruction, value, eps)
            return value

        return rounded

    def _rounding_parts(self, handler: Handler, original: Instruction) -> Handler:
        """Each float array of a tuple result moved as `_rounding` moves an array result, by
        its own type's ulp (the parts' ranges are not kept: their uses read them through
        `get-tuple-element`)."""
        eps = tuple(_eps(part.element_type) if part.element_type in _FLOAT_TYPES else None
                    for part in original.shape.tuple_shapes)

        def rounded(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = handler(interpreter, instruction, operands)
            if self.splitting:
                return value
            return tuple(
                part if part_eps is None or np.asarray(part).dtype.kind != "f"
                else randomly_rounded(self.draws, np.asarray(part), part_eps, in_place=False)
                for part, part_eps in zip(value, eps, strict=True))

        return rounded

    def _recording(self, handler: Handler, computation: str) -> Handler:
        def recorded(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = handler(interpreter, instruction, operands)
            if self.splitting:
                self.recorder.occurrence(computation, instruction)
                if instruction.opcode == "compare":
                    return self._compare_across(handler, interpreter, instruction, operands,
                                                np.asarray(value), computation)
                if instruction.opcode == "convert":  # to an integer: truncation's steps
                    return self._step_across(handler, interpreter, instruction, operands,
                                             np.asarray(value), computation)
                if instruction.opcode in ("reduce", "sort", "topk"):  # argmax, top-k
                    return self._ties_across(handler, interpreter, instruction, operands,
                                             value, computation)
                return value
            self.recorder.see(computation, instruction, value)
            return value

        return recorded

    def _stepping(self, handler: Handler, computation: str) -> Handler:
        def stepped(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = handler(interpreter, instruction, operands)
            if not self.splitting:
                return value
            return self._step_across(handler, interpreter, instruction, operands,
                                     np.asarray(value), computation)

        return stepped

    def _step_across(self, handler: Handler, interpreter: Interpreter, instruction: Instruction,
                     operands: list, value: np.ndarray, computation: str) -> np.ndarray:
        """floor, ceil, round or a convert to an integer whose operand is within `REACH`
        times its samples' spread of a step (an integer; a half-integer for round) and that
        still answers as the samples' middle does: answered from the step's other side."""
        x = np.asarray(operands[0])
        known = self.recorder.latest_range(computation, instruction.operands[0])
        if x.dtype.kind != "f" or known is None or known[0].shape != x.shape:
            return value
        low, high = known
        with np.errstate(invalid="ignore"):
            step = np.floor(x) + 0.5 if instruction.opcode.startswith("round") else np.round(x)
            margin, reach = x - step, REACH * _spread(x, low, high)
            undecided = (reach > 0) & (np.abs(margin) <= reach)
        if not np.any(undecided):
            return value
        other = step - np.where(margin >= 0, 1.0, -1.0) * np.maximum(np.abs(margin), reach / 2)
        moved = np.asarray(handler(interpreter, instruction, [np.where(undecided, other, x)]))
        expected = np.asarray(handler(interpreter, instruction, [(low + high) / 2]))
        across = undecided & (value == expected) & (moved != value)
        count = int(np.count_nonzero(across))
        if not count:
            return value
        self._moved(computation, instruction.name, count)
        return np.where(across, moved, value)

    def _ties_across(self, handler: Handler, interpreter: Interpreter,
                     instruction: Instruction, operands: list, value: Value,
                     computation: str) -> Value:
        """A sort or top-k (its keys, the first operand) or a variadic reduce (argmax) whose
        keys nearly tie, within `REACH` times their samples' spread: evaluated again with the
        tied keys swapped, so the tie resolves the other way (a sort: each near-tied pair
        of neighbours in sorted order; a reduce: the largest pair, and the smallest where
        there are four keys or more)."""
        keys = np.asarray(operands[0])
        known = self.recorder.latest_range(computation, instruction.operands[0])
        if keys.dtype.kind != "f" or known is None or known[0].shape != keys.shape:
            return value
        if instruction.opcode == "sort":
            axes: tuple[int, ...] = (instruction.dimensions or (0,))[0:1]
        elif instruction.opcode == "topk":
            axes = (keys.ndim - 1,)
        else:
            axes = tuple(instruction.dimensions or ())
        if not axes or keys.ndim == 0:
            return value
        with np.errstate(invalid="ignore"):
            reach = REACH * _spread(keys, *known)
        swapped, count = _swap_ties(keys, reach, axes,
                                    every_pair=instruction.opcode != "reduce")
        if not count:
            return value
        self._moved(computation, instruction.name, count)
        return handler(interpreter, instruction, [swapped, *operands[1:]])

    def _moved(self, computation: str, name: str, count: int) -> None:
        key = (computation, name)
        self.split[key] = self.split.get(key, 0) + count

    def _across(self, key: tuple[str, str, int], value: np.ndarray) -> np.ndarray:
        """`value` moved across zero where it is a candidate, its samples' middle is within
        `REACH` half ranges of zero, and no ancestor moved it across yet (it is still on the
        middle's side): to the middle's mirror end of that reach. The same rule, on the steep
        op's own samples, tells where it is decided (`split_candidates`), so a linear op
        (g / 2) is never decided where its operand is not. The half range is at least the
        array's median one (`_typical_half`): the few samples of one element may stray little
        by chance, and among millions of elements some do."""
        found = self.candidates.get(key)
        if found is None or value.dtype.kind != "f" or found[0].shape != value.shape:
            return value
        mask, steeps = found
        low, high = self.recorder.ranges[key]
        with np.errstate(invalid="ignore"):
            half = (high - low) / 2
            middle, reach = (low + high) / 2, REACH * np.maximum(half, _typical_half(half))
            unmoved = value * middle > 0
            move = mask & (reach > 0) & (np.abs(middle) <= reach) & unmoved
        if not np.any(move):
            return value
        credited = np.zeros(move.shape, dtype=bool)
        for decided, (computation, name) in steeps:
            here = move & decided & ~credited
            credited |= here
            if np.any(here):
                self._moved(computation, name, int(np.count_nonzero(here)))
        return np.where(move, middle - np.sign(middle) * reach, value)

    def _compare_across(self, handler: Handler, interpreter: Interpreter,
                        instruction: Instruction, operands: list, value: np.ndarray,
                        computation: str) -> np.ndarray:
        """A float compare whose operands' difference is within their noise of zero and that
        still answers as their samples' midpoints do: answered the other way."""
        arrays = [np.asarray(operand) for operand in operands]
        if any(array.dtype.kind != "f" for array in arrays):
            return value
        reach = np.zeros(value.shape)
        middles = list(arrays)
        for index, (name, array) in enumerate(zip(instruction.operands, arrays, strict=True)):
            known = self.recorder.latest_range(computation, name)
            if known is not None and known[0].shape == array.shape:
                with np.errstate(invalid="ignore"):
                    reach = reach + REACH * _spread(array, *known)
                middles[index] = (known[0] + known[1]) / 2
        with np.errstate(invalid="ignore"):
            undecided = (reach > 0) & (np.abs(arrays[0] - arrays[1]) <= reach)
        if not np.any(undecided):
            return value
        # Not answered the other way yet: as the samples' middles answer.
        across = undecided & (value == np.asarray(handler(interpreter, instruction, middles)))
        count = int(np.count_nonzero(across))
        if not count:
            return value
        self._moved(computation, instruction.name, count)
        return np.where(across, ~value, value)


def _accumulating(handler: Handler, eps: float, noisy: _NoisyInterpreter,
                  computation: str | None) -> Handler:
    """A dot declared in a type narrower than f32 may accumulate in that type (XLA CPU runs a
    bf16 dot that stays bf16 with bf16 partial sums), one product at a time at worst: `k`
    roundings (k products in all contracted dimensions) of half an ulp of the running sum.
    Their spread, sqrt(k) / 2 ulps of the running sum's root mean square, is estimated from
    the running sums after each of `ACCUMULATION_BLOCKS` blocks of the longest contracted
    dimension; each sample moves the exact sum by that much, up or down at random (every
    sample by the whole amount: a few samples drawing a size each leave some elements a
    spread far below it by chance). The first sample's estimate serves the later ones (kept
    in f32 within `SPREAD_BYTES`): their operands differ from its by rounding only, and they
    compute the dot in f32, whose rounding is 2^-16 of the bf16 (2^-13 of the f16) noise."""

    def accumulated(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
        numbers = instruction.dot_dimension_numbers
        lhs, rhs = np.asarray(operands[0]), np.asarray(operands[1])
        if noisy.splitting or numbers is None or not numbers.lhs_contracting_dims:
            return handler(interpreter, instruction, operands)
        key = None
        if computation is not None:
            occurrence = noisy.recorder.occurrences.get((computation, instruction.name), 0)
            key = (computation, instruction.name, occurrence)
        known = noisy.spreads.get(key) if key is not None else None
        if known is not None:  # f32 products and sums stray 2^-16 of the noise modelled here
            total = _in_f32(handler, interpreter, instruction, lhs, rhs)
            total += known * noisy.draws.signs(total.shape)
            return total
        found = _accumulation_spread(handler, interpreter, instruction, lhs, rhs, eps)
        if found is None:
            return handler(interpreter, instruction, operands)
        total, spread = found
        if key is not None and noisy.spread_bytes + total.size * 4 <= SPREAD_BYTES:
            noisy.spreads[key] = spread.astype(np.float32)
            noisy.spread_bytes += total.size * 4
        spread *= noisy.draws.signs(total.shape)
        total += spread
        return total

    return accumulated


def _in_f32(handler: Handler, interpreter: Interpreter, instruction: Instruction,
            lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The dot of the f64 shadow computed in f32, returned in f64."""
    if instruction.shape.element_type != "f64" or lhs.dtype != np.float64 \
            or rhs.dtype != np.float64:
        return np.asarray(handler(interpreter, instruction, [lhs, rhs]))
    narrow = replace(instruction, shape=replace(instruction.shape, element_type="f32"))
    value = handler(interpreter, narrow, [lhs.astype(np.float32), rhs.astype(np.float32)])
    return np.asarray(value).astype(np.float64)


def _accumulation_spread(handler: Handler, interpreter: Interpreter, instruction: Instruction,
                         lhs: np.ndarray, rhs: np.ndarray, eps: float
                         ) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact dot and the spread of its accumulation in a type of `eps` (`_accumulating`),
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


def _swap_ties(keys: np.ndarray, reach: np.ndarray, axes: tuple[int, ...],
               every_pair: bool) -> tuple[np.ndarray, int]:
    """`keys` with near-tied neighbours in sorted order swapped along `axes` (their
    difference within the sum of their reaches), and how many pairs were swapped: every
    pair that does not overlap another (`every_pair`), or the largest pair and, with four
    keys or more, the smallest."""
    rest = [d for d in range(keys.ndim) if d not in axes]
    order_axes = rest + list(axes)
    rows = int(np.prod([keys.shape[d] for d in rest], dtype=np.int64))
    flat = np.transpose(keys, order_axes).reshape(rows, -1).copy()
    width = np.transpose(reach, order_axes).reshape(rows, -1)
    n = flat.shape[1]
    if n < 2:
        return keys, 0
    valid = ~np.any(np.isnan(flat), axis=1)
    order = np.argsort(np.where(np.isnan(flat), 0.0, flat), axis=1, kind="stable")
    ranked = np.take_along_axis(flat, order, axis=1)
    ranked_reach = np.take_along_axis(width, order, axis=1)
    with np.errstate(invalid="ignore"):
        tie = (np.abs(np.diff(ranked, axis=1)) <= ranked_reach[:, 1:] + ranked_reach[:, :-1])
    tie &= (ranked_reach[:, 1:] + ranked_reach[:, :-1] > 0) & valid[:, None]
    if every_pair:
        even = tie.copy()
        even[:, 1::2] = False
        odd = tie & ~even
        odd[:, 0::2] = False
        beside = np.zeros_like(even)
        beside[:, 1:] |= even[:, :-1]
        beside[:, :-1] |= even[:, 1:]
        pairs = even | (odd & ~beside)
    else:
        pairs = np.zeros_like(tie)
        pairs[:, -1] = tie[:, -1]  # the largest two
        if n >= 4:
            pairs[:, 0] = tie[:, 0]  # the smallest two
    count = int(np.count_nonzero(pairs))
    if not count:
        return keys, 0
    row, position = np.nonzero(pairs)
    first, second = order[row, position], order[row, position + 1]
    flat[row, first], flat[row, second] = flat[row, second], flat[row, first].copy()
    shape = [keys.shape[d] for d in order_axes]
    back = np.argsort(order_axes)
    return np.transpose(flat.reshape(shape), back), count


def _typical_half(half: np.ndarray) -> float:
    """The median of an array's positive half ranges (0 when none is): the noise of a sum
    that nearly cancels is that of the running sums, which its array's elements share."""
    positive = half[np.isfinite(half) & (half > 0)]
    return float(np.median(positive)) if positive.size else 0.0


def _spread(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How far the samples strayed from `value` (the truth, in the split sample), per element:
    what the verdict's bound multiplies (`error_bound.py`)."""
    return np.maximum(high - value, value - low)


def _part(array: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    """`array[start:stop]` along `axis`, a view."""
    index = [slice(None)] * array.ndim
    index[axis] = slice(start, stop)
    return array[tuple(index)]


class _Draws:
    """Random rounding's draws: for each rounding, a window at a random offset into one pool
    of `POOL` uniform numbers in [-1, 1) (drawn once, from a fixed seed), fresh draws for an
    array larger than the pool. Drawing afresh for every element had cost more than the
    evaluation itself; windows at independent offsets keep the elements of one rounding
    independent, and two roundings' elements independent unless their offsets meet."""

    def __init__(self) -> None:
        self.units = np.random.default_rng((SEED, POOL)).random(POOL)
        self.units *= 2.0
        self.units -= 1.0
        self.factors_by_eps: dict[float, np.ndarray] = {}
        self.sign_pool: np.ndarray | None = None
        self.rng = np.random.default_rng(SEED)

    def reseed(self, sample: int) -> None:
        self.rng = np.random.default_rng((SEED, sample))

    def _window(self, pool: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        start = int(self.rng.integers(0, POOL - size + 1))
        return pool[start:start + size].reshape(shape)

    def factors(self, shape: tuple[int, ...], eps: float) -> np.ndarray:
        """`1 + u eps` for each element, `u` uniform in [-1, 1)."""
        if int(np.prod(shape, dtype=np.int64)) > POOL:
            factor = self.rng.random(shape)
            factor *= 2.0 * eps
            factor += 1.0 - eps
            return factor
        pool = self.factors_by_eps.get(eps)
        if pool is None:
            pool = self.factors_by_eps[eps] = 1.0 + eps * self.units
        return self._window(pool, shape)

    def signs(self, shape: tuple[int, ...]) -> np.ndarray:
        """-1 or +1 for each element (f32), each with probability 1/2: a multiply, where a
        masked negation cost five times as much."""
        if int(np.prod(shape, dtype=np.int64)) > POOL:
            return self.rng.integers(0, 2, size=shape).astype(np.float32) * 2 - 1
        if self.sign_pool is None:
            self.sign_pool = np.where(self.units < 0.0, -1.0, 1.0).astype(np.float32)
        return self._window(self.sign_pool, shape)


def randomly_rounded(draws: _Draws, value: np.ndarray, eps: float,
                     in_place: bool = False) -> np.ndarray:
    """`value * (1 + u)` with `u` uniform in [-eps, eps), in `value`'s type (in `value`
    itself when `in_place`: an op's fresh result, owned by no one else)."""
    factors = draws.factors(value.shape, eps)
    if in_place and value.dtype.kind == "f":
        return np.multiply(value, factors, out=value, casting="unsafe")
    return (value * factors).astype(value.dtype, copy=False)


# Ops whose result is never negative, whatever their operands; and ops that keep their
# operands' non-negativity.
_NON_NEGATIVE = frozenset(("exponential", "sqrt", "rsqrt", "abs", "logistic", "iota"))
_KEEP_ALL = frozenset(("add", "multiply", "divide", "select", "concatenate", "clamp"))
_KEEP_FIRST = frozenset(("broadcast", "reshape", "transpose", "convert", "copy", "slice",
                         "reduce", "reduce-window", "bitcast", "power", "dynamic-slice",
                         "reverse", "pad"))


def non_negative(module: HloModule, arguments: Sequence[LiteralValue] = ()
                 ) -> set[tuple[str, str]]:
    """The float values that cannot be negative by construction ((computation, name)):
    `exp`, `sqrt`, `abs`, constants and the entry's parameters none of whose values is
    negative (`arguments`: the execution's; an optimizer's second moment), and what sums,
    products, moves and reductions make of them. Their noise is relative, so they never cross
    zero (a softmax's exp is not AdamW's gradient, nor its second moment)."""
    found: set[tuple[str, str]] = set()
    for computation in module.computations:
        for instruction in computation.instructions:
            known = [(computation.name, operand) in found for operand in instruction.operands]
            opcode = instruction.opcode
            if opcode == "select":
                known = known[1:]  # the predicate is no value
            if (opcode in _NON_NEGATIVE
                    or (opcode == "constant" and _none_negative(instruction.literal))
                    or (opcode == "parameter" and computation.name == module.entry_name
                        and _none_negative(_argument(instruction, arguments)))
                    or (opcode in _KEEP_ALL and known and all(known))
                    or (opcode in _KEEP_FIRST and known and known[0])
                    or (opcode == "maximum" and any(known))
                    or (opcode == "multiply" and len(set(instruction.operands)) == 1)):
                found.add((computation.name, instruction.name))
    return found


def _argument(parameter: Instruction, arguments: Sequence[LiteralValue]) -> LiteralValue | None:
    number = parameter.parameter_number
    return arguments[number] if number is not None and number < len(arguments) else None


def _none_negative(value: LiteralValue | None) -> bool:
    """Whether `value` is an array of numbers none of which is negative or NaN."""
    if not isinstance(value, np.ndarray) or \
            kind_of(value.dtype) not in ("float", "narrow", "signed", "unsigned"):
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(value.astype(np.float64, copy=False) >= 0))


def _steep_ancestors(
    declared: dict[tuple[str, str], Instruction], signless: set[tuple[str, str]]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each value whose sign a steep op follows, with those ops ((computation, name) all): a
    steep op's first operand, and through element-wise ops of the same shape, their operands,
    back to where the value is made (a dot, a reduce, a parameter). Values that cannot be
    negative are left out, and so is what lies behind them."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for (computation, name), instruction in declared.items():
        if instruction.opcode not in STEEP_AT_ZERO or not _is_float(instruction):
            continue
        seen: set[str] = set()
        work = [instruction.operands[0]]
        while work:
            operand = work.pop()
            key = (computation, operand)
            made = declared.get(key)
            if made is None or key in signless or operand in seen or not _is_float(made):
                continue
            seen.add(operand)
            found.setdefault(key, []).append((computation, name))
            if made.opcode in ELEMENTWISE:
                work.extend(o for o in made.operands
                            if (other := declared.get((computation, o))) is not None
                            and other.shape.dims == made.shape.dims)
    return found


def split_candidates(
    declared: dict[tuple[str, str], Instruction], recorder: _Recorder,
    ancestors: dict[tuple[str, str], list[tuple[str, str]]],
) -> dict[tuple[str, str, int], Candidate]:
    """Where the split sample may move a value across zero, by (computation, name, occurrence),
    with the steep ops it answers to: the elements of a steep op's sign-following ancestors
    (`_steep_ancestors`) where the op itself is decided, far from zero in its samples (beyond
    `REACH` times their half range: g / (|g| + eps) is +-1 in every sample, g / 2 is not),
    each op with the elements where it is.
    Whether an element moves is decided as the split sample makes it (`_across`)."""
    found: dict[tuple[str, str, int], Candidate] = {}
    for (computation, name, occurrence), (low, _) in recorder.ranges.items():
        mask: np.ndarray | None = None
        steeps: list[tuple[np.ndarray, tuple[str, str]]] = []
        for steep in ancestors.get((computation, name), ()):
            if declared[steep].opcode == "sign":
                decided: np.ndarray = np.ones(low.shape, dtype=bool)
            else:
                known = recorder.ranges.get((*steep, occurrence))
                if known is None or known[0].shape != low.shape:
                    continue
                with np.errstate(invalid="ignore"):
                    decided = np.abs(known[0] + known[1]) > REACH * (known[1] - known[0])
            if np.any(decided):
                mask = decided if mask is None else mask | decided
                steeps.append((decided, steep))
        if mask is not None:
            found[(computation, name, occurrence)] = (mask, steeps)
    return found


def noise_of(module: HloModule, arguments: Sequence[LiteralValue], samples: int = SAMPLES) -> Noise:
    """The reference `module` evaluated `samples` times in f64 with random rounding at each
    op's declared precision, on `arguments` already widened to the shadow's types.

    What the split sample reads (`_needed`) is kept within `NEEDED_SHARE` of the memory
    limit: when it would not fit (sized from the declared shapes), it is split into groups
    that do, each group's values kept while the samples run again for it and its own split
    sample moves them. The random samples are the same each time (fixed seeds); the ranges
    are their union with every group's split sample."""
    from workbench.replay.hlo.shadow import widened_module
    from workbench.sizes import format_size, memory_limit

    shadow = widened_module(module)
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = _steep_ancestors(declared, non_negative(module, arguments))
    budget = int(NEEDED_SHARE * memory_limit())
    groups = _groups(_needed(declared, ancestors), declared, budget)
    check_stage_memory(shadow, groups, declared, budget)
    found: _Found | None = None
    left_out = 0
    for needed in groups:
        recorder = _Recorder(needed=needed, needed_bytes=budget)
        group = _sampled(shadow, declared, arguments, samples, recorder, ancestors)
        found = group if found is None else found.merged(group)
        left_out += recorder.left_out
    assert found is not None
    message = None
    if left_out:
        message = (f"the split sample did not cover {left_out} value(s) beyond its memory "
                   f"budget ({format_size(budget)}, a quarter of the memory limit; raise it "
                   "with --memory-limit)")
    return Noise(found.low, found.high, found.discontinuities(declared), found.nan_seen,
                 message)


def check_stage_memory(shadow: HloModule, groups: list[set[tuple[str, str]]],
                       declared: dict[tuple[str, str], Instruction], budget: int) -> int:
    """The most bytes the stage holds at once, from declared shapes, before any sample runs:
    one evaluation of the f64 shadow, the samples' range of its result (`RANGE_BYTES` an
    element), and the values' ranges the recorder keeps: for the split sample (its largest
    group, within `budget`), to name jumps (`TRACKED_BYTES`) and the accumulation spreads
    (`SPREAD_BYTES`), at most every value's. Raises `OverMemoryLimit` saying so when that
    passes the memory limit, so a run that cannot fit stops before its most expensive stage,
    not by running out."""
    from workbench.replay.processes import memory
    from workbench.sizes import format_size

    evaluation = Interpreter(shadow).holds_at_once(shadow.entry_name)  # raises beyond it
    result = _range_bytes(shadow.entry.root.shape)
    split = min(budget, max((_group_bytes(group, declared) for group in groups), default=0))
    # At most every value's range: a small program keeps far less than the caps.
    kept = min(split + TRACKED_BYTES + SPREAD_BYTES, _group_bytes(set(declared), declared))
    needed = evaluation + result + kept
    memory.check(needed, (
        f"the random-rounding stage (one f64 evaluation holds {format_size(evaluation)}, the "
        f"samples' range of the result {format_size(result)}, the values' ranges "
        f"{format_size(kept)})"))
    return needed


def _range_bytes(shape: Shape) -> int:
    """What the samples' range of a value of `shape` keeps: `RANGE_BYTES` a float element."""
    if shape.is_tuple:
        return sum(_range_bytes(part) for part in shape.tuple_shapes)
    if not shape.is_array or shape.element_type not in _FLOAT_TYPES:
        return 0
    return RANGE_BYTES * int(np.prod(shape.dims, dtype=np.int64))


def _group_bytes(group: set[tuple[str, str]],
                 declared: dict[tuple[str, str], Instruction]) -> int:
    return sum(_range_bytes(declared[key].shape) for key in group if key in declared)


def _needed(declared: dict[tuple[str, str], Instruction],
            ancestors: dict[tuple[str, str], list[tuple[str, str]]]
            ) -> list[set[tuple[str, str]]]:
    """What the split sample reads, as clusters that must be kept together: each steep op
    with the values whose sign it follows, each compare, step, integer convert, sort, top-k
    or argmax with its operands (overlapping clusters merged), in program order."""
    clusters: list[set[tuple[str, str]]] = []
    for (computation, _), instruction in declared.items():
        if instruction.opcode in STEPS | {"compare"} or (
                instruction.opcode in ("convert", "reduce", "sort", "topk")
                and _has_discrete(instruction)):
            clusters.append({(computation, name)
                             for name in (instruction.name, *instruction.operands)})
    steep: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for value, ops in ancestors.items():
        for op in ops:
            steep.setdefault(op, {op}).add(value)
    clusters.extend(steep.values())
    merged: list[set[tuple[str, str]]] = []
    owner: dict[tuple[str, str], int] = {}
    for cluster in clusters:
        into = {owner[key] for key in cluster if key in owner}
        if not into:
            index = len(merged)
            merged.append(set(cluster))
        else:
            index = min(into)
            for other in sorted(into - {index}):
                merged[index] |= merged[other]
                merged[other] = set()
            merged[index] |= cluster
        for key in merged[index]:
            owner[key] = index
    order = {key: position for position, key in enumerate(declared)}
    kept = [cluster for cluster in merged if cluster]
    return sorted(kept, key=lambda c: min(order.get(key, 0) for key in c))


def _groups(clusters: list[set[tuple[str, str]]], declared: dict[tuple[str, str], Instruction],
            budget: int) -> list[set[tuple[str, str]]]:
    """The clusters packed in order into groups whose values' ranges, sized from their
    declared shapes, fit `budget` with `TRACKED_BYTES` kept besides (one group when all fit;
    a cluster larger than the budget alone is a group of its own)."""
    def size(key: tuple[str, str]) -> int:
        instruction = declared.get(key)
        if instruction is None or not _is_float(instruction):
            return 0
        return RANGE_BYTES * int(np.prod(instruction.shape.dims, dtype=np.int64))

    room = max(budget - TRACKED_BYTES, 0)
    groups: list[set[tuple[str, str]]] = []
    current: set[tuple[str, str]] = set()
    used = 0
    for cluster in clusters:
        cost = sum(size(key) for key in cluster - current)
        if current and used + cost > room:
            groups.append(current)
            current, used = set(), 0
            cost = sum(size(key) for key in cluster)
        current |= cluster
        used += cost
    groups.append(current)
    return groups


@dataclass
class _Found:
    """What the samples of one group found, merged over groups by `merged`."""

    low: Any
    high: Any
    nan_seen: Any
    flips: dict[tuple[str, str], int]
    nan_flips: dict[tuple[str, str], int]
    jumps: dict[tuple[str, str], int]
    instructions: dict[tuple[str, str], Instruction]

    def merged(self, other: _Found) -> _Found:
        def most(a: dict[tuple[str, str], int], b: dict[tuple[str, str], int]
                 ) -> dict[tuple[str, str], int]:
            return {key: max(a.get(key, 0), b.get(key, 0)) for key in {**a, **b}}

        return _Found(_combine(self.low, other.low, np.fmin),
                      _combine(self.high, other.high, np.fmax),
                      _either(self.nan_seen, other.nan_seen),
                      most(self.flips, other.flips), most(self.nan_flips, other.nan_flips),
                      most(self.jumps, other.jumps), {**other.instructions, **self.instructions})

    def discontinuities(self, declared: dict[tuple[str, str], Instruction]
                        ) -> tuple[Discontinuity, ...]:
        """Flips (most elements first), domain boundaries crossed, then the first jumps."""
        found = [_discontinuity(declared[key], key[0], count, flipped=True)
                 for key, count in sorted(self.flips.items(), key=lambda item: -item[1])]
        for key, count in self.nan_flips.items():
            instruction = self.instructions[key]
            if not any((key[0], operand) in self.nan_flips for operand in instruction.operands):
                found.append(_discontinuity(instruction, key[0], count, flipped=True))
        for key, count in sorted(self.jumps.items(), key=lambda item: -item[1]):
            instruction = self.instructions[key]
            if any((key[0], operand) in self.jumps for operand in instruction.operands):
                continue  # downstream of a jump: the jump is named, not what follows it
            found.append(_discontinuity(instruction, key[0], count, flipped=False))
        return tuple(found)


def _sampled(shadow: HloModule, declared: dict[tuple[str, str], Instruction],
             arguments: Sequence[LiteralValue], samples: int, recorder: _Recorder,
             ancestors: dict[tuple[str, str], list[tuple[str, str]]]) -> _Found:
    """The random samples, then the split sample, with `recorder` keeping what it needs."""
    from workbench.replay.hlo import evaluate_module

    interpreter = _NoisyInterpreter(shadow, declared, recorder)
    low = high = nan_seen = None
    for sample in range(samples):
        interpreter.reseed(sample)
        value = evaluate_module(shadow, arguments, interpreter=interpreter)
        if low is None:
            low, high = value, _copy(value)
        else:
            low, high = _combine(low, value, np.fmin), _combine(high, value, np.fmax)
        nan_seen = _nans(value, nan_seen)
    interpreter.start_split(split_candidates(declared, recorder, ancestors))
    value = evaluate_module(shadow, arguments, interpreter=interpreter)
    # Its NaNs are not legal ones: it crosses each threshold alone, so where it answers a
    # compare the other way without moving the operand (`where(x > 0, sqrt(x), 0)`), or moves
    # a value the program keeps non-negative, it computes what no rounding can. Its finite
    # values widen the range; a NaN leaves it as the random samples made it.
    low, high = _combine(low, value, np.fmin), _combine(high, value, np.fmax)
    flips = dict(recorder.differing)  # flipped between samples, or in the split sample
    for key, count in interpreter.split.items():
        flips[key] = max(flips.get(key, 0), count)
    found = _Found(low, high, nan_seen, flips, dict(recorder.nan_flips), recorder.jumps(),
                   recorder.instructions)
    interpreter.release()
    return found


def _nans(value: Any, seen: Any) -> Any:
    """`seen` (None at first) with the NaN elements of the float arrays of `value` added."""
    if isinstance(value, tuple):
        before = (None,) * len(value) if seen is None else seen
        return tuple(_nans(v, s) for v, s in zip(value, before, strict=True))
    array = np.asarray(value)
    if array.dtype.kind not in "fc":
        return None
    found = np.isnan(array)
    return found if seen is None else seen | found


def _either(a: Any, b: Any) -> Any:
    """Where `a` or `b` is true (boolean arrays with a result's structure, None for none)."""
    if a is None or b is None:
        return a if b is None else b
    if isinstance(a, tuple):
        return tuple(_either(x, y) for x, y in zip(a, b, strict=True))
    return a | b


def _combine(a: Any, b: Any, pick: Any) -> Any:
    """`pick` (np.fmin or np.fmax) of `a` and `b` (a result's structure), into `a` where it is
    a float array of its own: the stage's ranges of a result are its largest arrays."""
    if isinstance(a, tuple):
        return tuple(_combine(x, y, pick) for x, y in zip(a, b, strict=True))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fc":
        return a
    if a.dtype.kind == "c":  # range of each part
        return pick(a.real, b.real) + 1j * pick(a.imag, b.imag)
    if a.flags.owndata and a.flags.writeable and a.shape == b.shape:
        return pick(a, b, out=a)
    return pick(a, b)


def _copy(value: Any) -> Any:
    """`value` (a result's structure) with each array copied."""
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return np.array(value, copy=True)


def _discontinuity(
    instruction: Instruction, computation: str, elements: int, flipped: bool
) -> Discontinuity:
    op_name = instruction.metadata.op_name if instruction.metadata else ""
    return Discontinuity(
        instruction.name, instruction.opcode, computation, op_name, elements, flipped
    )

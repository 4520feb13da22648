"""The split sample: a last, deterministic evaluation of the f64 reference that goes where
the random samples rarely land, to the other side of each threshold a value is within its
noise of (`REACH` times its samples' spread): which values it may move across zero (those
whose sign a steep op follows, `split_candidates`, never those non-negative by construction,
`non_negative`), and its moves (`SplitSample`). The domain sample, after it, moves only the
values whose sign decides whether an op is defined (`DOMAIN_AT_ZERO`: sqrt of a second moment
within its noise of 0), where they are made, and crosses no other threshold: everything it
computes follows from one legal rounding of each value, its NaNs included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, LiteralValue
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.parameter_signs import fractional_exponent
from workbench.replay.hlo.registry import ELEMENTWISE, Handler, Value
from workbench.replay.judge.noise.op_kinds import EXACT, STEEP_AT_ZERO, is_float

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter
    from workbench.replay.judge.noise.recorder import Recorder

# How far past its samples' midpoint an operand may legally lie, in half ranges of its samples
# (as far as the verdict's bound lets a legal value stray: `error_bound.C`).
REACH = 4.0
# Ops undefined where their (first) operand crosses zero: NaN below it (a domain boundary;
# `power` only with a constant exponent that is not an integer).
DOMAIN_AT_ZERO = frozenset(("sqrt", "rsqrt", "log", "power"))
# Ops whose rounding can carry a value across zero: sums that cancel. A product's or a
# quotient's rounding is relative, so their sign moves only with an operand's.
SUMS = frozenset(("add", "subtract", "dot", "convolution"))
# Where the split sample may move a value: all elements, and each steep op's share of them.
Candidate = tuple[np.ndarray, list[tuple[np.ndarray, tuple[str, str]]]]


class SplitSample:
    """The split sample's moves (`noise_of`): the f64 shadow without random rounding, where
    each value within its noise of a threshold (a compare's, a step's, a near tie's, zero for
    the `candidates` of `split_candidates`) answers from the threshold's other side; the
    elements moved, by the instruction that answers (`elements_moved`)."""

    def __init__(self, recorder: Recorder, candidates: dict[tuple[str, str, int], Candidate],
                 thresholds: bool = True) -> None:
        self.recorder = recorder
        self.candidates = candidates
        # False: the domain sample, which moves its candidates and answers every compare,
        # step and tie as its (moved) operands do
        self.thresholds = thresholds
        self.elements_moved: dict[tuple[str, str], int] = {}  # by steep op or discontinuity

    def step_across(self, handler: Handler, interpreter: Interpreter, instruction: Instruction,
                    operands: list, value: np.ndarray, computation: str) -> np.ndarray:
        """floor, ceil, round or a convert to an integer whose operand is within `REACH`
        times its samples' spread of a step (an integer; a half-integer for round) and that
        still answers as the samples' middle does: answered from the step's other side."""
        if not self.thresholds:
            return value
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

    def ties_across(self, handler: Handler, interpreter: Interpreter,
                    instruction: Instruction, operands: list, value: Value,
                    computation: str) -> Value:
        """A sort or top-k (its keys, the first operand) or a variadic reduce (argmax) whose
        keys nearly tie, within `REACH` times their samples' spread: evaluated again with the
        tied keys swapped, so the tie resolves the other way (a sort: each near-tied pair
        of neighbours in sorted order; a reduce: the largest pair, and the smallest where
        there are four keys or more)."""
        if not self.thresholds:
            return value
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
        self.elements_moved[key] = self.elements_moved.get(key, 0) + count

    def across(self, key: tuple[str, str, int], value: np.ndarray) -> np.ndarray:
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

    def compare_across(self, handler: Handler, interpreter: Interpreter,
                       instruction: Instruction, operands: list, value: np.ndarray,
                       computation: str) -> np.ndarray:
        """A float compare whose operands' difference is within their noise of zero and that
        still answers as their samples' midpoints do: answered the other way."""
        if not self.thresholds:
            return value
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


def undefined_below_zero(declared: dict[tuple[str, str], Instruction], computation: str,
                         instruction: Instruction) -> bool:
    """Whether `instruction` is NaN where its first operand is negative (`DOMAIN_AT_ZERO`):
    sqrt, rsqrt, log, and a power whose exponent is a constant that is not an integer."""
    if instruction.opcode not in DOMAIN_AT_ZERO:
        return False
    return instruction.opcode != "power" or fractional_exponent(
        lambda name: declared.get((computation, name)), instruction)


def steep_ancestors(
    declared: dict[tuple[str, str], Instruction], signless: set[tuple[str, str]]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each value whose sign a steep op, or an op undefined below zero, follows, with those
    ops ((computation, name) all): such an op's first operand, and through element-wise ops of
    the same shape, their operands, back to where the value is made (a dot, a reduce, a
    parameter); for an op undefined below zero, only those a sum makes (`SUMS`: the domain
    sample moves no other). Values that cannot be negative are left out, and so is what lies
    behind them; so is a value whose sign is its operands' (`_sign_of_operands`), which
    crosses zero only where one of them does, and is moved there."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for (computation, name), instruction in declared.items():
        if not is_float(instruction):
            continue
        steep = instruction.opcode in STEEP_AT_ZERO
        if not steep and not undefined_below_zero(declared, computation, instruction):
            continue
        seen: set[str] = set()
        work = [instruction.operands[0]]
        while work:
            operand = work.pop()
            key = (computation, operand)
            made = declared.get(key)
            if made is None or key in signless or operand in seen or not is_float(made):
                continue
            seen.add(operand)
            if made.opcode in SUMS or (
                    steep and not _sign_of_operands(declared, signless, computation, made)):
                found.setdefault(key, []).append((computation, name))
            if made.opcode in ELEMENTWISE:
                work.extend(o for o in made.operands
                            if (other := declared.get((computation, o))) is not None
                            and other.shape.dims == made.shape.dims)
    return found


# Ops whose result has their operands' signs (a product's, a quotient's), rounded relatively:
# it crosses zero only where an operand does.
SIGN_OF_OPERANDS = frozenset(("multiply", "divide", "convert", "negate", "tanh", "erf", "cbrt",
                              "exponential-minus-one", "log-plus-one"))
# Values no rounding moves: they never cross zero.
_NOISELESS = frozenset(("parameter", "constant", "iota"))
_MOVES = frozenset(("broadcast", "reshape", "transpose", "bitcast", "copy", "slice"))


def _sign_of_operands(declared: dict[tuple[str, str], Instruction],
                      signless: set[tuple[str, str]], computation: str,
                      made: Instruction) -> bool:
    """Whether the sign of `made` crosses zero only where a float operand's does, and each
    such operand is either unable to cross it (never negative, or moved by no rounding) or
    is one the split sample moves itself: a sum or another rounding element-wise op of the
    same shape (`steep_ancestors` follows it there). Moving `made` too would move it where
    no legal rounding can (a product by a tiny positive factor, its array's typical noise
    dwarfing it), and its range would take room the split sample's groups need (a GPT-2
    step's AdamW updates: a third of it)."""
    if made.opcode not in SIGN_OF_OPERANDS:
        return False
    for name in made.operands:
        operand = declared.get((computation, name))
        if operand is None or not is_float(operand) or (computation, name) in signless:
            continue
        if _noiseless(declared, computation, operand):
            continue
        if operand.shape.dims == made.shape.dims and (
                operand.opcode in SUMS
                or (operand.opcode in ELEMENTWISE and operand.opcode not in EXACT)
                or _sign_of_operands(declared, signless, computation, operand)):
            continue  # the split sample moves it, or what its sign follows
        return False
    return True


def _noiseless(declared: dict[tuple[str, str], Instruction], computation: str,
               instruction: Instruction) -> bool:
    """Whether `instruction` is made by no rounding: a parameter, a constant, an iota, or
    their values moved."""
    if instruction.opcode in _NOISELESS:
        return True
    return instruction.opcode in _MOVES and all(
        (operand := declared.get((computation, name))) is not None
        and _noiseless(declared, computation, operand) for name in instruction.operands)


def split_candidates(
    declared: dict[tuple[str, str], Instruction], recorder: Recorder,
    ancestors: dict[tuple[str, str], list[tuple[str, str]]], domain: bool = False,
) -> dict[tuple[str, str, int], Candidate]:
    """Where the split sample may move a value across zero, by (computation, name, occurrence),
    with the steep ops it answers to: the elements of a steep op's sign-following ancestors
    (`steep_ancestors`) where the op itself is decided, far from zero in its samples (beyond
    `REACH` times their half range: g / (|g| + eps) is +-1 in every sample, g / 2 is not),
    each op with the elements where it is. With `domain`, the domain sample's: the ancestors
    of ops undefined below zero (made by sums: its NaNs must follow from one legal rounding
    of each value), at every element (which side it lands on always decides).
    Whether an element moves is decided as the split sample makes it (`SplitSample.across`)."""
    found: dict[tuple[str, str, int], Candidate] = {}
    for (computation, name, occurrence), (low, _) in recorder.ranges.items():
        mask: np.ndarray | None = None
        steeps: list[tuple[np.ndarray, tuple[str, str]]] = []
        for steep in ancestors.get((computation, name), ()):
            op = declared[steep]
            if (op.opcode in STEEP_AT_ZERO) == domain:
                continue
            if domain or op.opcode == "sign":
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


def may_move(candidates: dict[tuple[str, str, int], Candidate], recorder: Recorder) -> bool:
    """Whether some candidate's samples' middle lies within its reach of zero
    (`SplitSample.across`), so that a sample moving candidates would move some."""
    for key, (mask, _) in candidates.items():
        low, high = recorder.ranges[key]
        with np.errstate(invalid="ignore"):
            half = (high - low) / 2
            reach = REACH * np.maximum(half, _typical_half(half))
            if np.any(mask & (reach > 0) & (np.abs((low + high) / 2) <= reach)):
                return True
    return False

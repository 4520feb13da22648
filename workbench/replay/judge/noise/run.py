"""The noise stage's driver: the random samples and the split sample of each group of what
the split sample reads, merged into one `Noise`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, LiteralValue
from workbench.replay.judge.noise.budget import (
    check_stage_memory,
    needed_clusters,
    packed_groups,
    split_sample_budget,
)
from workbench.replay.judge.noise.model import SAMPLES, Discontinuity, Noise
from workbench.replay.judge.noise.noisy_interpreter import NoisyInterpreter
from workbench.replay.judge.noise.recorder import Recorder
from workbench.replay.judge.noise.split_sample import (
    may_move,
    non_negative,
    split_candidates,
    steep_ancestors,
)


def noise_of(module: HloModule, arguments: Sequence[LiteralValue], samples: int = SAMPLES) -> Noise:
    """The reference `module` evaluated `samples` times in f64 with random rounding at each
    op's declared precision, on `arguments` widened to the shadow's types or in their declared
    types (float arrays then widened where each instruction reads them: `hlo/shadow.py`).

    What the split sample reads (`needed_clusters`) is kept within `NEEDED_SHARE` of the
    memory limit: when it would not fit (sized from the declared shapes), it is split into groups
    that do, each group's values kept while the samples run again for it and its own split
    sample moves them. The random samples are the same each time (fixed seeds); the ranges
    are their union with every group's split sample."""
    from workbench.replay.hlo.shadow import narrow_arguments, narrowed_module
    from workbench.sizes import format_size

    shadow = narrowed_module(module, narrow_arguments(module, arguments))
    declared = {(c.name, i.name): i for c in module.computations for i in c.instructions}
    ancestors = steep_ancestors(declared, non_negative(module, arguments))
    budget = split_sample_budget()
    groups = packed_groups(needed_clusters(declared, ancestors), declared, budget)
    check_stage_memory(shadow, groups, declared, budget)
    found: _Found | None = None
    left_out = 0
    for needed in groups:
        recorder = Recorder(needed=needed, needed_bytes=budget)
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
             arguments: Sequence[LiteralValue], samples: int, recorder: Recorder,
             ancestors: dict[tuple[str, str], list[tuple[str, str]]]) -> _Found:
    """The random samples, then the split sample, with `recorder` keeping what it needs, and
    the domain sample where some value an op's domain depends on is within its noise of 0."""
    from workbench.replay.hlo import evaluate_module

    interpreter = NoisyInterpreter(shadow, declared, recorder)
    low = high = nan_seen = None
    for sample in range(samples):
        interpreter.reseed(sample)
        value = evaluate_module(shadow, arguments, interpreter=interpreter)
        if low is None:
            low, high = value, _copy(value)
        else:
            low, high = _combine(low, value, np.fmin), _combine(high, value, np.fmax)
        nan_seen = _nans(value, nan_seen)
    split = interpreter.start_split(split_candidates(declared, recorder, ancestors))
    value = evaluate_module(shadow, arguments, interpreter=interpreter)
    # Its NaNs are not legal ones: it crosses each threshold alone, so where it answers a
    # compare the other way without moving the operand (`where(x > 0, sqrt(x), 0)`), or moves
    # a value the program keeps non-negative, it computes what no rounding can. Its finite
    # values widen the range; a NaN leaves it as the random samples made it.
    low, high = _combine(low, value, np.fmin), _combine(high, value, np.fmax)
    flips = dict(recorder.differing)  # flipped between samples, or in the split sample
    for key, count in split.elements_moved.items():
        flips[key] = max(flips.get(key, 0), count)
    domain = split_candidates(declared, recorder, ancestors, domain=True)
    if may_move(domain, recorder):
        boundary = interpreter.start_split(domain, thresholds=False)
        value = evaluate_module(shadow, arguments, interpreter=interpreter)
        # Its NaNs are legal: it moves each value across zero where a sum makes it, within its
        # noise, and crosses no other threshold, so all it computes follows from one legal
        # rounding of each value (sqrt of a second moment that rounding may leave negative).
        low, high = _combine(low, value, np.fmin), _combine(high, value, np.fmax)
        nan_seen = _nans(value, nan_seen)
        for key, count in boundary.elements_moved.items():
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

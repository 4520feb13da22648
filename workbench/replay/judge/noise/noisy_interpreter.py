"""The evaluator of the noise stage: the f64 shadow with each rounding op's result moved by
up to one ulp of its declared type (a dot that may accumulate in a narrow type by its
accumulation's spread), each discontinuity's outputs reported to the recorder, and in the
split sample the values within their noise of a threshold moved across it. An evaluator
subclass that lives with the judgment: what it rounds, keeps and moves is the noise model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.hlo_ir import HloModule, Instruction
from workbench.replay.hlo.dtypes import dtype_of
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.registry import Handler, Value
from workbench.replay.judge.noise.op_kinds import (
    DISCONTINUOUS,
    EXACT,
    F32_EPS,
    FLOAT_TYPES,
    ROUNDED_TUPLES,
    STEPS,
    converts_exactly,
    eps_of,
    has_discrete,
    is_float,
)
from workbench.replay.judge.noise.random_rounding import (
    Draws,
    accumulation_spread,
    in_f32,
    randomly_rounded,
)
from workbench.replay.judge.noise.recorder import Recorder
from workbench.replay.judge.noise.split_sample import Candidate, SplitSample
from workbench.replay.processes.memory import return_freed_memory


class NoisyInterpreter(Interpreter):
    """Evaluates the f64 shadow with each rounding op's result moved by up to one ulp of its
    declared type, and reports the discontinuities' outputs to a recorder."""

    def __init__(
        self, shadow: HloModule, declared: dict[tuple[str, str], Instruction], recorder: Recorder,
        output_sink: Callable[[int, Value], None] | None = None, spreads_budget: int = 0,
    ) -> None:
        super().__init__(shadow, output_sink=output_sink)
        self.declared = declared
        self.recorder = recorder
        self.draws = Draws()
        # Each accumulating dot's spread (`_accumulating`), by occurrence, from the first
        # sample, within `spreads_budget` bytes (`budget.spreads_budget`).
        self.spreads: dict[tuple[str, str, int], np.ndarray] = {}
        self.spread_bytes = 0
        self.spreads_budget = spreads_budget
        # The split sample (`start_split`): no random rounding, values moved across.
        self.split_sample: SplitSample | None = None

    @property
    def splitting(self) -> bool:
        return self.split_sample is not None

    def reseed(self, sample: int) -> None:
        return_freed_memory()  # the last sample's intermediates: the next one's room
        self.draws.reseed(sample)
        self.recorder.sample = sample
        self.recorder.occurrences.clear()
        self.recorder.seen = 0

    def release(self) -> None:
        """Drop the values kept for the samples now, not at the next garbage collection: the
        handlers' closures and the plans that hold them make a cycle with this interpreter,
        and the ranges it keeps are the stage's largest arrays."""
        self._plans.clear()
        self.spreads.clear()
        if self.split_sample is not None:
            self.split_sample.candidates = {}
        for kept in (self.recorder.first, self.recorder.first_nan, self.recorder.ranges):
            kept.clear()

    def start_split(self, candidates: dict[tuple[str, str, int], Candidate],
                    thresholds: bool = True) -> SplitSample:
        """The next evaluation is the split sample (`noise_of`): the f64 shadow, without random
        rounding, with the `candidates` (`split_candidates`) moved across zero where they are
        within their noise of it; without `thresholds`, the domain sample (no compare, step
        or tie answered the other way)."""
        self.split_sample = SplitSample(self.recorder, candidates, thresholds)
        self.recorder.occurrences.clear()
        return self.split_sample

    def _handler(self, computation: Any, instruction: Instruction, batched: bool) -> Handler:
        handler = super()._handler(computation, instruction, batched)
        original = self.declared.get((computation.name, instruction.name))
        if original is None:
            return handler
        if original.opcode in ROUNDED_TUPLES and original.shape.is_tuple:
            return self._rounding_parts(handler, original)
        if original.opcode == "convert" and is_float(original):
            converted = self._exact_convert(handler, computation.name, original)
            if converted is not None:
                return converted
        if original.opcode not in EXACT and is_float(original):
            eps = eps_of(original.shape.element_type)
            if original.opcode == "dot" and eps > F32_EPS:
                handler = _accumulating(handler, eps, self, None if batched else computation.name)
            return self._rounding(handler, eps, None if batched else computation.name)
        if original.opcode in DISCONTINUOUS and not batched and has_discrete(original):
            return self._recording(handler, computation.name)
        if original.opcode in STEPS and not batched:
            return self._stepping(handler, computation.name)
        return handler

    def _exact_convert(self, handler: Handler, computation: str,
                       original: Instruction) -> Handler | None:
        """A convert from an integer or pred: XLA rounds it to nearest, a function of its
        operand alone that no pass may change, and exactly for any integer the declared type
        holds (an s32 127 is 127.0 in f32; moved by a random fraction of an ulp it was
        126.99999, and a clip bound made a following cast to int8 flip). None for a convert
        from a float type, which rounds."""
        if not converts_exactly(self.declared.get((computation, original.operands[0]))):
            return None
        declared_type = dtype_of(original.shape.element_type)

        def converted(interpreter: Interpreter, instruction: Instruction,
                      operands: list) -> Value:
            value = np.asarray(handler(interpreter, instruction, operands))
            if value.dtype.kind != "f" or value.dtype == declared_type:
                return value
            return value.astype(declared_type).astype(value.dtype)

        return converted

    def _rounding(self, handler: Handler, eps: float, computation: str | None) -> Handler:
        def rounded(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = np.asarray(handler(interpreter, instruction, operands))
            if self.split_sample is not None:
                if computation is None:
                    return value
                key = self.recorder.occurrence(computation, instruction)
                return self.split_sample.across(key, value)
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
        eps = tuple(eps_of(part.element_type) if part.element_type in FLOAT_TYPES else None
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
            split = self.split_sample
            if split is not None:
                self.recorder.occurrence(computation, instruction)
                if instruction.opcode == "compare":
                    return split.compare_across(handler, interpreter, instruction, operands,
                                                np.asarray(value), computation)
                if instruction.opcode == "convert":  # to an integer: truncation's steps
                    return split.step_across(handler, interpreter, instruction, operands,
                                             np.asarray(value), computation)
                if instruction.opcode in ("reduce", "sort", "topk"):  # argmax, top-k
                    return split.ties_across(handler, interpreter, instruction, operands,
                                             value, computation)
                return value
            self.recorder.see(computation, instruction, value)
            return value

        return recorded

    def _stepping(self, handler: Handler, computation: str) -> Handler:
        def stepped(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
            value = handler(interpreter, instruction, operands)
            if self.split_sample is None:
                return value
            return self.split_sample.step_across(handler, interpreter, instruction, operands,
                                                 np.asarray(value), computation)

        return stepped


def _accumulating(handler: Handler, eps: float, noisy: NoisyInterpreter,
                  computation: str | None) -> Handler:
    """A dot declared in a type narrower than f32 may accumulate in that type (XLA CPU runs a
    bf16 dot that stays bf16 with bf16 partial sums), one product at a time at worst: `k`
    roundings (k products in all contracted dimensions) of half an ulp of the running sum.
    Their spread, sqrt(k) / 2 ulps of the running sum's root mean square, is estimated from
    the running sums after each of `ACCUMULATION_BLOCKS` blocks of the longest contracted
    dimension; each sample moves the exact sum by that much, up or down at random (every
    sample by the whole amount: a few samples drawing a size each leave some elements a
    spread far below it by chance). The first sample's estimate serves the later ones (kept
    in f32 within the interpreter's `spreads_budget`): their operands differ from its by
    rounding only, and they compute the dot in f32, whose rounding is 2^-16 of the bf16
    (2^-13 of the f16) noise."""

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
            total = in_f32(handler, interpreter, instruction, lhs, rhs)
            noise = known.astype(total.dtype)
            noisy.draws.flip(noise)
            total += noise
            return total
        found = accumulation_spread(handler, interpreter, instruction, lhs, rhs, eps)
        if found is None:
            return handler(interpreter, instruction, operands)
        total, spread = found
        if key is not None and noisy.spread_bytes + total.size * 4 <= noisy.spreads_budget:
            noisy.spreads[key] = spread.astype(np.float32)
            noisy.spread_bytes += total.size * 4
        noisy.draws.flip(spread)
        total += spread
        return total

    return accumulated

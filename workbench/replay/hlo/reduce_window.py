"""`reduce-window` and `select-and-scatter`.

Both walk the window positions in row-major order, one batched step per position for all
output elements at once (a strided view of the padded input, no copy). Padding and the holes
of base dilation are not elements: like HloEvaluator and XLA's CPU emitter, they are skipped,
so the accumulator starts at the init value and only takes real elements.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction, WindowDimension
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.combiners import Combiner, combine_at
from workbench.replay.hlo.registry import Value, handles
from workbench.replay.hlo.shape_ops import pad_array

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


class Windows:
    """The window positions of one input: `slice(offset)` is, for every output element, the
    padded input element at that window offset; `valid(offset)` says which are real."""

    def __init__(self, shape: tuple[int, ...], window: tuple[WindowDimension, ...],
                 where: str) -> None:
        if len(window) != len(shape):
            raise EvaluationError(f"window of rank {len(window)} on rank {len(shape)}")
        if any(w.window_reversal for w in window):
            raise Unsupported("window reversal outside convolution")
        self.window = window
        self.where = where  # the instruction, named when its padding exceeds the memory limit
        self.low = [w.padding_low for w in window]
        self.high = [w.padding_high for w in window]
        self.interior = [w.base_dilation - 1 for w in window]
        self.padded = self._pad(np.ones(shape, bool), False)
        self.has_holes = not self.padded.all()
        extents = [(w.size - 1) * w.window_dilation + 1 for w in window]
        self.out_shape = tuple(
            max((p - e) // w.stride + 1, 0)
            for p, e, w in zip(self.padded.shape, extents, window, strict=True)
        )

    def _pad(self, x: np.ndarray, value: object) -> np.ndarray:
        if not any(self.low) and not any(self.high) and not any(self.interior):
            return x
        return pad_array(x, np.asarray(value, x.dtype), self.low, self.high, self.interior,
                         self.where)

    def pad(self, x: np.ndarray) -> np.ndarray:
        return self._pad(np.asarray(x), np.zeros((), np.asarray(x).dtype))

    def offsets(self) -> itertools.product:
        return itertools.product(*[range(w.size) for w in self.window])

    def slice(self, padded: np.ndarray, offset: tuple[int, ...]) -> np.ndarray:
        return padded[tuple(
            slice(k * w.window_dilation, k * w.window_dilation + (n - 1) * w.stride + 1, w.stride)
            if n else slice(0, 0)
            for k, w, n in zip(offset, self.window, self.out_shape, strict=True)
        )]

    def valid(self, offset: tuple[int, ...]) -> np.ndarray | None:
        return self.slice(self.padded, offset) if self.has_holes else None


@handles("reduce-window")
def reduce_window(interpreter: Interpreter, instruction: Instruction,
                  operands: list[Value]) -> Value:
    count = len(operands) // 2
    inputs = [np.asarray(x) for x in operands[:count]]
    inits = [np.asarray(v) for v in operands[count:]]
    if instruction.window is None:
        raise EvaluationError(f"{instruction.name}: reduce-window without window")
    windows = Windows(inputs[0].shape, instruction.window, instruction.name)
    padded = [windows.pad(x) for x in inputs]
    combiner = Combiner(interpreter, instruction.called_computations[0],
                        [x.dtype for x in inputs])
    accumulators = [np.broadcast_to(init, windows.out_shape) for init in inits]
    for offset in windows.offsets():
        values = [windows.slice(p, offset) for p in padded]
        combined = combiner(accumulators, values)
        valid = windows.valid(offset)
        if valid is None:
            accumulators = combined
        else:
            accumulators = [np.where(valid, new, old)
                            for new, old in zip(combined, accumulators, strict=True)]
    results = [np.broadcast_to(a, windows.out_shape) for a in accumulators]
    return results[0] if count == 1 else tuple(results)


@handles("select-and-scatter")
def select_and_scatter(interpreter: Interpreter, instruction: Instruction,
                       operands: list[Value]) -> Value:
    operand, source, init = (np.asarray(v) for v in operands)
    if instruction.window is None or len(instruction.called_computations) < 2:
        raise EvaluationError(f"{instruction.name}: select-and-scatter without window")
    if any(w.base_dilation != 1 for w in instruction.window):
        raise Unsupported("select-and-scatter with base dilation")
    select_name, scatter_name = instruction.called_computations[:2]
    windows = Windows(operand.shape, instruction.window, instruction.name)
    if windows.out_shape != source.shape:
        raise EvaluationError(f"{instruction.name}: source shape {source.shape} does not "
                              f"match the {windows.out_shape} windows")
    padded = windows.pad(operand)
    # Operand coordinates of every padded position, flattened (-1 for padding).
    flat_positions = windows.pad(np.arange(operand.size).reshape(operand.shape) + 1) - 1
    selected_value = None
    selected_position = np.full(windows.out_shape, -1, np.int64)
    for offset in windows.offsets():
        value = windows.slice(padded, offset)
        position = windows.slice(flat_positions, offset)
        real = position >= 0
        if selected_value is None:
            selected_value = value
            take = real
        else:
            keep = np.asarray(interpreter.apply_scalar(select_name, [selected_value, value]))
            take = real & ((selected_position < 0) | ~keep)
            selected_value = np.where(take, value, selected_value)
        selected_position = np.where(take, position, selected_position)
    result = np.array(np.broadcast_to(init, operand.shape)).reshape(-1)
    chosen = selected_position >= 0
    combiner = Combiner(interpreter, scatter_name, [result.dtype])
    combine_at(combiner, [result], selected_position[chosen], [source[chosen]])
    return result.reshape(operand.shape)

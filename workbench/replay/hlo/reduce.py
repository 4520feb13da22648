"""`reduce`, in HloEvaluator's order: for each output element, the accumulator starts at the
init value and takes the reduced elements one by one in the operand's physical order (its
layout's major-to-minor order of the reduced dimensions; row-major without a layout), whatever
order `dimensions={...}` lists them in. Floating sums and products keep that order exactly
(`ufunc.accumulate` along each output's elements, or with many outputs one reduced element of
every output at a time); for integers and for max/min the order cannot change the result, so
numpy reduces at once.

XLA's CPU compiler rewrites reductions of more than 32 elements into a reduce-window stage and
a reduce (tree reduction), and its code generator contracts a multiply feeding a fused sum into
fused multiply-adds and may sum fused reductions in its own order: a compiled program can round
a float sum differently. The evaluator computes what the HLO says, in order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError
from workbench.replay.hlo.combiners import Combiner
from workbench.replay.hlo.dtypes import F32, kind_of
from workbench.replay.hlo.elementwise import float_maximum, float_minimum
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

_ORDER_FREE = {
    "add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
_PRED = {
    "add": np.logical_or, "multiply": np.logical_and, "maximum": np.logical_or,
    "minimum": np.logical_and, "and": np.logical_and, "or": np.logical_or,
    "xor": np.logical_xor,
}


def _to_last_axis(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    keep = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, keep + list(axes))
    return moved.reshape([x.shape[d] for d in keep] + [-1])


def _float_extreme(opcode: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """max/min over axes with NaN propagation and -0.0 < +0.0."""
    ufunc = np.maximum if opcode == "maximum" else np.minimum
    result = ufunc.reduce(x, axis=axes)
    if np.any(result == 0):
        wanted_negative = opcode == "minimum"
        present = ((x == 0) & (np.signbit(x) == wanted_negative)).any(axis=axes)
        result = np.where((result == 0) & present, np.copysign(np.zeros((), x.dtype),
                                                               -1 if wanted_negative else 1),
                          result)
    return result


# Output elements from which a reduction in order takes one reduced element of every output
# at a time (one vectorized op per reduced element) rather than running `ufunc.accumulate`
# along each output's elements (one dependent op per element, and an array as large as the
# operand): 2 to 10 times faster on a training step's sums, the same sums in the same order.
ROW_AT_A_TIME = 256


def _row_at_a_time(running: np.ufunc, x: np.ndarray, init: np.ndarray, axes: tuple[int, ...],
                   out_shape: list[int]) -> np.ndarray:
    """`init` op x[first reduced element] op x[next] ..., for every output element at once."""
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, [*axes, *kept]).reshape(-1, math.prod(out_shape))
    total = np.empty(rows.shape[1], x.dtype)
    total[...] = init
    for row in rows:
        running(total, row, out=total)
    return total.reshape(out_shape)


def reduce_recognized(opcode: str, x: np.ndarray, init: np.ndarray,
                      axes: tuple[int, ...], in_order: bool = True) -> np.ndarray:
    """Reduce `x` over `axes` with a recognized binary op, starting from `init`: a float sum
    or product one element after another as XLA CPU runs it, unless not `in_order` (the
    f64 shadow, where numpy's pairwise sum is as good a truth and far faster)."""
    kind = kind_of(x.dtype)
    out_shape = [x.shape[d] for d in range(x.ndim) if d not in axes]
    if any(x.shape[a] == 0 for a in axes):
        return np.broadcast_to(init, out_shape)
    if kind == "pred":
        ufunc = _PRED[opcode]
        return ufunc(init, ufunc.reduce(x, axis=axes))
    if kind in ("float", "complex") and opcode in ("add", "multiply") and not in_order:
        running = np.add if opcode == "add" else np.multiply
        return running(np.asarray(init, x.dtype), running.reduce(x, axis=axes, dtype=x.dtype))
    if kind in ("float", "narrow", "complex") and opcode in ("add", "multiply"):
        running = np.add if opcode == "add" else np.multiply
        if math.prod(out_shape) >= ROW_AT_A_TIME:
            return _row_at_a_time(running, x, np.asarray(init, x.dtype), axes, out_shape)
        flat = _to_last_axis(x, axes)
        start = np.broadcast_to(np.asarray(init, x.dtype), [*flat.shape[:-1], 1])
        chain = running.accumulate(np.concatenate([start, flat], axis=-1), axis=-1, dtype=x.dtype)
        return chain[..., -1]
    if kind in ("float", "narrow") and opcode in ("maximum", "minimum"):
        work = x.astype(F32) if kind == "narrow" else x
        start = np.asarray(init).astype(work.dtype)
        combine = float_maximum if opcode == "maximum" else float_minimum
        return combine(start, _float_extreme(opcode, work, axes)).astype(x.dtype)
    if kind in ("signed", "unsigned"):
        order_free = _ORDER_FREE[opcode]
        return order_free(init, order_free.reduce(x, axis=axes, dtype=x.dtype))
    raise EvaluationError(f"reduce {opcode} on {x.dtype}")


def fold(combiner: Combiner, inputs: list[np.ndarray], inits: list[Value],
         axes: tuple[int, ...]) -> list[np.ndarray]:
    """The general reduce: one combiner step per reduced element, batched over outputs."""
    flats = [_to_last_axis(x, axes) for x in inputs]
    out_shape = flats[0].shape[:-1]
    accumulators = [np.broadcast_to(init, out_shape) for init in inits]
    for k in range(flats[0].shape[-1]):
        accumulators = combiner(accumulators, [flat[..., k] for flat in flats])
    return [np.broadcast_to(a, out_shape) for a in accumulators]


def physical_order(interpreter: Interpreter, instruction: Instruction,
                   axes: tuple[int, ...]) -> tuple[int, ...]:
    """`axes` from the operand's most major to its most minor dimension."""
    layout = interpreter.operand_shape(instruction, 0).layout
    if layout is None or sorted(layout) != list(range(len(layout))):
        return tuple(sorted(axes))
    return tuple(d for d in reversed(layout) if d in axes)


@handles("reduce")
def reduce(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    count = len(operands) // 2
    inputs = [np.asarray(x) for x in operands[:count]]
    inits = [np.asarray(v) for v in operands[count:]]
    axes = physical_order(interpreter, instruction, tuple(instruction.dimensions or ()))
    combiner = Combiner(interpreter, instruction.called_computations[0],
                        [x.dtype for x in inputs])
    if combiner.opcode is not None and axes:
        return reduce_recognized(combiner.opcode, inputs[0], inits[0], axes,
                                 in_order=not interpreter.module.widened)
    results = fold(combiner, inputs, inits, axes)
    return results[0] if count == 1 else tuple(results)

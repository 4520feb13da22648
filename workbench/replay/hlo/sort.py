"""`sort` (any comparator, variadic) and `topk`.

A comparator of the form `compare(f(lhs_i), f(rhs_i)), direction=LT|GT` (JAX's: canonicalize
NaN and -0.0, then a TOTALORDER compare) becomes one stable numpy argsort on `f` of operand
i. Any other comparator is run batched on all pairs of a row (rank = how many elements sort
before), or pair by pair for long rows. Equal elements keep their order (a stable sort; XLA
gives no other guarantee for `is_stable=false`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cmp_to_key
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter

PAIRWISE_LIMIT = 1 << 22  # elements in the all-pairs comparison table


def ordering_key(key: np.ndarray, comparison_type: str | None) -> np.ndarray | None:
    """Integers whose ascending order is the `compare` order of `key`; None when that
    compare is no strict weak order (FLOAT compare of NaNs) or has no numpy equivalent."""
    kind = kind_of(key.dtype)
    if kind in ("float", "narrow"):
        if comparison_type != "TOTALORDER":
            if np.isnan(key.astype(np.float32) if kind == "narrow" else key).any():
                return None
            key = np.where(key == 0, np.zeros((), key.dtype), key)  # -0.0 == +0.0
        return dtypes.total_order_key(key)
    if kind == "pred":
        return key.astype(np.uint8)
    if kind == "signed" and comparison_type == "UNSIGNED":
        return key.view(dtypes.uint_of_size(key.dtype.itemsize))
    if kind == "unsigned" and comparison_type == "SIGNED":
        return key.view(dtypes.int_of_size(key.dtype.itemsize))
    if kind in ("signed", "unsigned"):
        return key
    return None


def _parameters_of(interpreter: Interpreter, name: str, root: str) -> set[int]:
    computation = interpreter.computation(name)
    found: set[int] = set()
    pending, seen = [root], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        instruction = computation.by_name[current]
        if instruction.opcode == "parameter":
            found.add(instruction.parameter_number or 0)
        pending.extend(instruction.operands)
    return found


def _same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    unsigned = dtypes.uint_of_size(x.dtype.itemsize)
    return bool(np.array_equal(dtypes.contiguous(x).view(unsigned),
                               dtypes.contiguous(y).view(unsigned)))


def _key_order(interpreter: Interpreter, name: str, arrays: list[np.ndarray],
               axis: int) -> np.ndarray | None:
    computation = interpreter.computation(name)
    root = computation.root
    if root.opcode != "compare" or root.comparison_direction not in ("LT", "GT"):
        return None
    left = _parameters_of(interpreter, name, root.operands[0])
    right = _parameters_of(interpreter, name, root.operands[1])
    if len(left) != 1 or len(right) != 1:
        return None
    (p,), (q,) = left, right
    if p // 2 != q // 2 or p == q:
        return None
    descending = (root.comparison_direction == "GT") != (p > q)  # swapped sides flip it
    operand = arrays[p // 2]
    try:
        key_left = np.asarray(interpreter.evaluate_cone(name, root.operands[0], {p: operand}))
        key_right = np.asarray(interpreter.evaluate_cone(name, root.operands[1], {q: operand}))
    except Unsupported:
        return None
    if key_left.shape != operand.shape or not _same_bits(key_left, key_right):
        return None
    key = ordering_key(key_left, root.comparison_type)
    if key is None:
        return None
    if descending:
        key = ~key if key.dtype.kind in "iu" else ~key.astype(np.int64)
    return np.argsort(key, axis=axis, kind="stable")


def _pairwise_order(interpreter: Interpreter, name: str, arrays: list[np.ndarray],
                    axis: int) -> np.ndarray:
    moved = [np.moveaxis(a, axis, -1) for a in arrays]
    arguments = []
    for a in moved:
        arguments += [a[..., :, None], a[..., None, :]]
    count = moved[0].shape[-1]
    before = np.broadcast_to(np.asarray(interpreter.apply_scalar(name, arguments), dtype=bool),
                             (*moved[0].shape, count))
    beaten = before.sum(axis=-2)  # [i]: how many j sort strictly before i
    equivalent = ~before & ~np.swapaxes(before, -1, -2)
    tied = (equivalent & np.tri(count, count, -1, dtype=bool)).sum(axis=-1)  # j < i
    rank = beaten + tied
    return np.moveaxis(np.argsort(rank, axis=-1, kind="stable"), -1, axis)


def _row_by_row_order(interpreter: Interpreter, name: str, arrays: list[np.ndarray],
                      axis: int) -> np.ndarray:
    moved = [np.moveaxis(a, axis, -1) for a in arrays]
    rows = moved[0].shape[:-1]
    count = moved[0].shape[-1]
    order = np.empty(moved[0].shape, np.int64)
    for row in np.ndindex(rows):
        values = [a[row] for a in moved]

        def less(i: int, j: int, values: list[np.ndarray] = values) -> bool:
            arguments = []
            for v in values:
                arguments += [v[i], v[j]]
            return bool(np.asarray(interpreter.call(name, arguments)))

        def three_way(i: int, j: int, less: Callable[[int, int], bool] = less) -> int:
            return -1 if less(i, j) else (1 if less(j, i) else 0)

        order[row] = sorted(range(count), key=cmp_to_key(three_way))
    return np.moveaxis(order, -1, axis)


@handles("sort")
def sort(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    arrays = [np.asarray(x) for x in operands]
    if not instruction.dimensions or not instruction.called_computations:
        raise EvaluationError(f"{instruction.name}: sort without dimension or comparator")
    axis = instruction.dimensions[0]
    name = instruction.called_computations[0]
    if arrays[0].ndim == 0 or arrays[0].shape[axis] <= 1:
        return arrays[0] if len(arrays) == 1 else tuple(arrays)
    order = sort_order(interpreter, name, arrays, axis)
    results = [np.take_along_axis(a, order, axis) for a in arrays]
    return results[0] if len(results) == 1 else tuple(results)


def sort_order(interpreter: Interpreter, name: str, arrays: list[np.ndarray],
               axis: int) -> np.ndarray:
    """The stable order comparator `name` puts the rows of `arrays` along `axis` in."""
    order = _key_order(interpreter, name, arrays, axis)
    if order is None:
        count = arrays[0].shape[axis]
        if arrays[0].size * count <= PAIRWISE_LIMIT and interpreter.batchable(name):
            order = _pairwise_order(interpreter, name, arrays, axis)
        else:
            order = _row_by_row_order(interpreter, name, arrays, axis)
    return order


@handles("topk")
def topk(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    x = np.asarray(operands[0])
    if instruction.k is None:
        raise EvaluationError(f"{instruction.name}: topk without k")
    key = ordering_key(x, "TOTALORDER")
    if key is None:
        raise Unsupported(f"topk on {x.dtype}")
    if instruction.largest is not False:
        key = ~key
    order = np.argsort(key, axis=-1, kind="stable")[..., :instruction.k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)

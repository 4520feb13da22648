"""affine: the ops loop lowerings and tiling leave behind (apply, min, for, load, store, yield).

Affine maps are evaluated with their dimension operands first, then their symbols, as the
affine dialect defines; `affine.for` bounds take the maximum (lower) or minimum (upper) of
their map's results.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import affine
from xdsl.interpreter import (
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir.affine import AffineMap

from workbench.replay.deadline import check_loop
from workbench.replay.mlir.interpreter import ReplayInterpreter
from workbench.replay.mlir.interpreters.memref import check_index


def _apply(affine_map: AffineMap, operands: tuple[Any, ...]) -> tuple[int, ...]:
    dims = [int(value) for value in operands[: affine_map.num_dims]]
    symbols = [int(value) for value in operands[affine_map.num_dims :]]
    return affine_map.eval(dims, symbols)


@register_impls
class AffineFunctions(InterpreterFunctions):
    @impl(affine.ApplyOp)
    def run_apply(
        self, interpreter: ReplayInterpreter, op: affine.ApplyOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        (value,) = _apply(op.map.data, args)
        return (value,)

    @impl(affine.MinOp)
    def run_min(
        self, interpreter: ReplayInterpreter, op: affine.MinOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (min(_apply(op.map.data, args)),)

    @impl(affine.ForOp)
    def run_for(
        self, interpreter: ReplayInterpreter, op: affine.ForOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        lower_count = len(op.lowerBoundOperands)
        upper_count = len(op.upperBoundOperands)
        lower = max(_apply(op.lowerBoundMap.data, args[:lower_count]))
        upper = min(_apply(op.upperBoundMap.data, args[lower_count : lower_count + upper_count]))
        values = tuple(args[lower_count + upper_count :])
        for iterations, index in enumerate(range(lower, upper, op.step.value.data), 1):
            values = interpreter.run_ssacfg_region(op.body, (index, *values), "affine.for")
            check_loop("affine.for", iterations)
        return values

    @impl(affine.LoadOp)
    def run_load(
        self, interpreter: ReplayInterpreter, op: affine.LoadOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        buffer, *operands = args
        index = _apply(op.map.data, tuple(operands))
        check_index(buffer, index, "affine.load")
        return (buffer[index],)

    @impl(affine.StoreOp)
    def run_store(
        self, interpreter: ReplayInterpreter, op: affine.StoreOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        value, buffer, *operands = args
        index = _apply(op.map.data, tuple(operands))
        check_index(buffer, index, "affine.store")
        buffer[index] = value
        return ()

    @impl_terminator(affine.YieldOp)
    def run_yield(
        self, interpreter: ReplayInterpreter, op: affine.YieldOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

"""scf: xDSL's implementations (for, if, while, yield, condition, index_switch), plus
`scf.parallel` with `scf.reduce` and `scf.execute_region`.

`scf.parallel` iterations may run in any order; they run here in lexicographic order, and
each `scf.reduce` region folds the iteration's values into the accumulators in that order.
"""

from __future__ import annotations

import itertools
from typing import Any

from xdsl.dialects import scf
from xdsl.interpreter import ReturnedValues, impl, impl_terminator, register_impls
from xdsl.interpreters.scf import ScfFunctions

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter


@register_impls
class ReplayScfFunctions(ScfFunctions):
    @impl(scf.ParallelOp)
    def run_parallel(
        self, interpreter: ReplayInterpreter, op: scf.ParallelOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        rank = len(op.lowerBound)
        lower, upper, step = args[:rank], args[rank : 2 * rank], args[2 * rank : 3 * rank]
        accumulators = list(args[3 * rank :])
        if any(value <= 0 for value in step):
            raise EvaluationError("scf.parallel with a non-positive step")
        reduce_op = op.body.block.last_op
        ranges = [range(lo, hi, st) for lo, hi, st in zip(lower, upper, step, strict=True)]
        for point in itertools.product(*ranges):
            values = interpreter.run_ssacfg_region(op.body, point, "scf.parallel")
            if not isinstance(reduce_op, scf.ReduceOp):
                continue
            for index, (region, value) in enumerate(zip(reduce_op.reductions, values, strict=True)):
                (accumulators[index],) = interpreter.run_ssacfg_region(
                    region, (accumulators[index], value), "scf.reduce"
                )
        return tuple(accumulators)

    @impl_terminator(scf.ReduceOp)
    def run_reduce(
        self, interpreter: ReplayInterpreter, op: scf.ReduceOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.ReduceReturnOp)
    def run_reduce_return(
        self, interpreter: ReplayInterpreter, op: scf.ReduceReturnOp, args: tuple[Any, ...]
    ) -> tuple[ReturnedValues, tuple[Any, ...]]:
        return ReturnedValues(args), ()

    @impl(scf.ExecuteRegionOp)
    def run_execute_region(
        self, interpreter: ReplayInterpreter, op: scf.ExecuteRegionOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return interpreter.run_ssacfg_region(op.region, (), "scf.execute_region")

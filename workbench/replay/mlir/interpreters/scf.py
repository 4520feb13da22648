"""scf: xDSL's implementations (if, yield, condition, index_switch), plus `scf.for` and
`scf.while` that check the evaluation's deadline once per iteration (a miscompiled loop may
never end: `deadline.py`), `scf.parallel` with `scf.reduce`, and `scf.execute_region`.

`scf.parallel` iterations may run in any order; they run here in lexicographic order, and
each `scf.reduce` region folds the iteration's values into the accumulators in that order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xdsl.dialects import scf
from xdsl.interpreter import ReturnedValues, impl, impl_terminator, register_impls
from xdsl.interpreters.scf import ScfFunctions

from workbench.replay.deadline import check_loop
from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter


@register_impls
class ReplayScfFunctions(ScfFunctions):
    @impl(scf.ForOp)
    def run_for(
        self, interpreter: ReplayInterpreter, op: scf.ForOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        lower, upper, step, *values = args
        if step <= 0:
            raise EvaluationError("scf.for with a non-positive step")
        for iterations, index in enumerate(range(lower, upper, step), 1):
            values = list(interpreter.run_ssacfg_region(op.body, (index, *values), "scf.for"))
            check_loop("scf.for", iterations)
        return tuple(values)

    @impl(scf.WhileOp)
    def run_while(
        self, interpreter: ReplayInterpreter, op: scf.WhileOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The before region gives the condition and the values: the after region's
        arguments while it holds, the results once it does not."""
        values = args
        iterations = 0
        while True:
            condition, *forwarded = interpreter.run_ssacfg_region(op.before_region, values,
                                                                  "scf.while")
            if not condition:
                return tuple(forwarded)
            values = interpreter.run_ssacfg_region(op.after_region, tuple(forwarded),
                                                   "scf.while")
            iterations += 1
            check_loop("scf.while", iterations)

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
        for iterations, point in enumerate(_points(ranges), 1):
            check_loop("scf.parallel", iterations)
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


def _points(ranges: list[range]) -> Iterator[tuple[int, ...]]:
    """The points of `ranges` in lexicographic order, made as they are needed
    (`itertools.product` would first make each range a tuple: a planted bound of 2^63 then
    fails for memory instead of running out of time)."""
    if not ranges:
        yield ()
        return
    for index in ranges[0]:
        for rest in _points(ranges[1:]):
            yield (index, *rest)

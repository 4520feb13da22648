"""cf: xDSL's implementations (br, cond_br), plus `cf.switch` and `cf.assert`."""

from __future__ import annotations

from typing import Any

from xdsl.dialects import cf
from xdsl.interpreter import Successor, impl, impl_terminator, register_impls
from xdsl.interpreters.cf import CfFunctions

from workbench.replay.errors import EvaluationError
from workbench.replay.mlir.interpreter import ReplayInterpreter


@register_impls
class ReplayCfFunctions(CfFunctions):
    @impl_terminator(cf.SwitchOp)
    def run_switch(
        self, interpreter: ReplayInterpreter, op: cf.SwitchOp, args: tuple[Any, ...]
    ) -> tuple[Successor, tuple[Any, ...]]:
        flag = int(args[0])
        cases = [] if op.case_values is None else [int(v) for v in op.case_values.get_values()]
        if flag in cases:
            case = cases.index(flag)
            sizes = [int(size) for size in op.case_operand_segments.get_values()]
            start = sum(sizes[:case])
            operands = op.case_operands[start : start + sizes[case]]
            return Successor(op.case_blocks[case], interpreter.get_values(operands)), ()
        return Successor(op.default_block, interpreter.get_values(op.default_operands)), ()

    @impl(cf.AssertOp)
    def run_assert(
        self, interpreter: ReplayInterpreter, op: cf.AssertOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        if not args[0]:
            raise EvaluationError(f"cf.assert failed: {op.msg.data}")
        return ()

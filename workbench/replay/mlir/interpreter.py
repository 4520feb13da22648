"""xDSL's interpreter, dispatching straight to the registered implementations.

Three changes to xDSL's `Interpreter`, all about how it runs ops, not what an op does:

- an op without an implementation raises `Unsupported(<op name>)` (xDSL raises a generic
  `InterpretationError`), naming the op as printed even for ops of unknown dialects;
- errors raised by an implementation become one `EvaluationError` naming the op (numpy's
  IndexError for an out-of-bounds load, ...). xDSL re-raises them after printing the whole
  enclosing module into the exception's notes at every level of region nesting, which
  costs more than the replay itself on large modules;
- the values of SSA names live in one flat dictionary per function call, keyed by the value's
  identity, instead of a chain of scopes (one per block run) keyed by the value's hash. SSA
  dominance makes the flat frame safe (a value is always defined before it is used, and a
  loop body's values are redefined on each iteration); a call gets a new frame, so recursion
  is too. This roughly halves the time lowered loops take.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import SymbolRefAttr, UnregisteredOp
from xdsl.interpreter import Interpreter, OpImplResult, PythonValues, ReturnedValues
from xdsl.ir import Attribute, Operation, Region, SSAValue

from workbench.replay.deadline import check_loop
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.mlir.values import constant_value


def op_name(op: Operation) -> str:
    """The op's name as printed (`flow.dispatch`, not xDSL's `builtin.unregistered`)."""
    if isinstance(op, UnregisteredOp):
        return op.op_name.data
    return op.name


@dataclass
class ReplayInterpreter(Interpreter):
    """An `Interpreter` whose unknown ops are `Unsupported` and whose errors are not wrapped.

    It also holds what a run shares between ops: the module's dense resource blobs, and the
    decoded value of each constant op (decoded once: dense constants can be large, and
    constants inside loops run many times).
    """

    resources: dict[str, str] = field(default_factory=dict)
    constants: dict[Operation, Any] = field(default_factory=dict)
    # Per-run state of op implementations, keyed by a tuple naming its owner.
    cache: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    # One frame per active function call: id(SSA value) -> its runtime value.
    frames: list[dict[int, Any]] = field(default_factory=lambda: [{}])
    # Sees every op result as it is made (op, result number, value): localization.
    observer: Callable[[Operation, int, Any], None] | None = None

    def get_values(self, values: Iterable[SSAValue]) -> tuple[Any, ...]:
        frame = self.frames[-1]
        return tuple([frame[id(value)] for value in values])

    def set_values(self, pairs: Iterable[tuple[SSAValue, Any]]) -> None:
        frame = self.frames[-1]
        for value, runtime_value in pairs:
            frame[id(value)] = runtime_value

    def call_op(
        self, op: Operation | str | SymbolRefAttr, inputs: PythonValues = ()
    ) -> PythonValues:
        self.frames.append({})
        try:
            return super().call_op(op, inputs)
        finally:
            self.frames.pop()

    def run_ssacfg_region(
        self, region: Region, args: PythonValues, name: str = "unknown"
    ) -> PythonValues:
        """Run `region` from its entry block until a terminator returns (xDSL's semantics)."""
        block = region.blocks.first
        frame = self.frames[-1]
        branches = 0  # to another block: a `cf` loop's back edge among them
        while block is not None:
            block_args = block.args
            if len(block_args) != len(args):
                raise EvaluationError(
                    f"{name}: block takes {len(block_args)} arguments, got {len(args)}"
                )
            for argument, value in zip(block_args, args, strict=True):
                frame[id(argument)] = value
            op = block.first_op
            block = None
            while op is not None:
                result = self._run_op(op, tuple([frame[id(value)] for value in op._operands]))
                for ssa_value, value in zip(op.results, result.values, strict=True):
                    frame[id(ssa_value)] = value
                if self.observer is not None:
                    for number, value in enumerate(result.values):
                        self.observer(op, number, value)
                terminator = result.terminator_value
                if terminator is not None:
                    if isinstance(terminator, ReturnedValues):
                        return terminator.values
                    block, args = terminator
                    branches += 1
                    check_loop(f"the blocks of {name}", branches)
                    break
                op = op.next_op
        return ()

    def _run_op(self, op: Operation, inputs: PythonValues) -> OpImplResult:
        entry = self._impls._impl_dict.get(type(op))
        if entry is None:
            raise Unsupported(op_name(op))
        functions, implementation = entry
        try:
            result = implementation(functions, self, op, inputs)
        except (Unsupported, EvaluationError):
            raise
        except (ArithmeticError, IndexError, ValueError, TypeError, KeyError) as error:
            raise EvaluationError(f"{op_name(op)}: {error}") from error
        if len(result.values) != len(op.results):
            raise EvaluationError(
                f"{op_name(op)} produced {len(result.values)} values for {len(op.results)} results"
            )
        return result

    def implements(self, op: Operation) -> bool:
        return type(op) in self._impls._impl_dict

    def constant(self, op: Operation, attribute: Attribute, type_: Attribute) -> Any:
        """The value of a constant op (`attribute` of result type `type_`), decoded once."""
        value = self.constants.get(op)
        if value is None:
            value = constant_value(attribute, type_, self.resources)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            self.constants[op] = value
        return value

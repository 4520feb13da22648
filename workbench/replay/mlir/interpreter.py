"""xDSL's interpreter, dispatching straight to the registered implementations.

Two changes to xDSL's `Interpreter`, both about how it runs an op, not what an op does:

- an op without an implementation raises `Unsupported(<op name>)` (xDSL raises a generic
  `InterpretationError`), naming the op as printed even for ops of unknown dialects;
- errors raised by an implementation become one `EvaluationError` naming the op (numpy's
  IndexError for an out-of-bounds load, ...). xDSL re-raises them after printing the whole
  enclosing module into the exception's notes at every level of region nesting, which
  costs more than the replay itself on large modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import UnregisteredOp
from xdsl.interpreter import Interpreter, OpImplResult, PythonValues
from xdsl.ir import Attribute, Operation

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

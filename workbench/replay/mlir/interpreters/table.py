"""Registering ops from a table: `{OpClass: function(op, *operand values) -> value}`.

Most ops of arith, math and StableHLO are one numpy expression each; writing each as an
`@impl` method would repeat the same four lines a hundred times. A table keeps one line per
op, and `table_functions` turns it into an xDSL `InterpreterFunctions` class, registered like
any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

OpFunction = Callable[..., Any]


def table_functions(
    name: str, table: Mapping[type[Operation], OpFunction], base: type = InterpreterFunctions
) -> type[InterpreterFunctions]:
    """An `InterpreterFunctions` subclass of `base` running each op of `table` (one result)."""
    namespace: dict[str, Any] = {}
    for op_type, function in table.items():

        def run(
            self: InterpreterFunctions,
            interpreter: Interpreter,
            op: Operation,
            args: tuple[Any, ...],
            function: OpFunction = function,
        ) -> tuple[Any, ...]:
            return (function(op, *args),)

        namespace[f"run_{op_type.__name__}"] = impl(op_type)(run)
    return register_impls(type(name, (base,), namespace))

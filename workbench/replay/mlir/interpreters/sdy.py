"""Shardy: a sharding constraint is the identity when the program runs on one device."""

from __future__ import annotations

from workbench.replay.mlir.dialects import sdy
from workbench.replay.mlir.interpreters.table import table_functions

SdyFunctions = table_functions("SdyFunctions", {sdy.ShardingConstraintOp: lambda op, value: value})

"""The values a verdict keeps, moved to disk when they would crowd out the evaluations.

A replay keeps the reference's result for every step it judges, the judged step's result while
its truth is made, and the truth itself (its f64 values and bound): about `KEPT_FACTOR` times
the result in its own type. For a GPT-2-size training step (1.9 GB of results) that is more
than the whole memory limit before any evaluation runs. When it would pass `KEPT_SHARE` of
the memory limit, each large array is written to an unnamed temporary file (in the system's
temporary folder, never a dump folder) and read through a read-only mapping: what the
comparison reads is file cache the system can drop, and the file is gone with its last
mapping, so nothing is left behind, whatever ends the run.
"""

from __future__ import annotations

import mmap
import tempfile
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, Instruction
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.registry import Handler, Value
from workbench.replay.processes.memory import SMALLEST
from workbench.sizes import memory_limit

KEPT_FACTOR = 6  # reference, judged result, truth and bound (f64: twice the result each)
KEPT_SHARE = 0.5  # of the memory limit; the rest is the evaluations'


def should_spill(result_bytes: int) -> bool:
    """Whether a replay whose result takes `result_bytes` should keep its values on disk."""
    return KEPT_FACTOR * result_bytes > KEPT_SHARE * memory_limit()


def value_bytes(value: Any) -> int:
    """Bytes of the arrays of a value (a tree of arrays, None for none)."""
    if isinstance(value, tuple):
        return sum(value_bytes(part) for part in value)
    return 0 if value is None else int(np.asarray(value).nbytes)


def spilled(value: Any) -> Any:
    """`value` (a tree of arrays, None for none) with each array of at least `SMALLEST` bytes
    on disk, mapped read-only; an array that cannot be written (a full disk) stays in
    memory."""
    if isinstance(value, tuple):
        return tuple(spilled(part) for part in value)
    if value is None or _mapped(value):
        return value
    array = np.asarray(value)
    if array.nbytes < max(SMALLEST, 1) or array.dtype.hasobject:
        return value
    try:
        with tempfile.TemporaryFile(prefix="workbench-spill-") as file:
            array.tofile(file)  # C order, whatever the layout
            file.flush()
            return np.memmap(file, dtype=array.dtype, mode="r", shape=array.shape)
    except OSError:
        return value


def _mapped(value: Any) -> bool:
    """Whether `value`'s memory is a file mapping (on disk already): an `mmap` at the end
    of its chain of bases (an unpickled `np.memmap` has none)."""
    while value is not None:
        if isinstance(value, mmap.mmap):
            return True
        value = getattr(value, "base", None)
    return False


class OutputsToDisk(Interpreter):
    """An interpreter that moves each output of the entry to disk as it is made, when nothing
    but the entry's result tuple reads it: a training step's new parameters and optimizer
    state (as large as its arguments) are not held in memory beside the rest of the step."""

    _outputs: frozenset[str] | None = None  # the entry's (`_only_outputs`), found once

    def _handler(self, computation: Computation, instruction: Instruction,
                 batched: bool) -> Handler:
        handler = super()._handler(computation, instruction, batched)
        if batched or computation.name != self.module.entry_name:
            return handler
        if self._outputs is None:
            self._outputs = _only_outputs(computation)
        if instruction.name not in self._outputs:
            return handler

        def to_disk(interpreter: Interpreter, instruction: Instruction,
                    operands: list[Value]) -> Value:
            return spilled(handler(interpreter, instruction, operands))

        return to_disk


def _only_outputs(computation: Computation) -> frozenset[str]:
    """The operands of a computation's root tuple that no other instruction reads."""
    root = computation.root
    if root.opcode != "tuple":
        return frozenset()
    read = {operand for instruction in computation.instructions if instruction is not root
            for operand in instruction.operands}
    return frozenset(name for name in root.operands if name not in read)

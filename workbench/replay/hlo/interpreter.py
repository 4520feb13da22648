"""Run HLO computations: a compiled plan per computation, values in a flat slot list.

Per-instruction overhead is one handler call with its operand list: the plan resolves names
to slot numbers and opcodes to handlers once per computation, and frees each value after its
last use so long programs do not hold every intermediate.

An optional `Observer` sees every value of the computations run unbatched (the entry, fusion
and called bodies, loop bodies per iteration) as it is made: localization keeps the ones it
needs. Without one, evaluation takes the plain path and pays nothing for the hook.

Scalar computations (reducers, comparators, `map` and scatter combiners) are also run
*batched*: their parameters bound to whole arrays instead of scalars, which is exact for
computations made only of elementwise ops, and lets reduce, sort, scatter and reduce-window
call an arbitrary combiner once per step instead of once per element.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import sub_byte
from workbench.replay.hlo.dtypes import contiguous, dtype_of
from workbench.replay.hlo.float_environment import flushing
from workbench.replay.hlo.registry import ELEMENTWISE, Handler, Value, handler_for
from workbench.replay.processes import memory

if TYPE_CHECKING:
    from workbench.replay.hlo.spmd import DeviceContext

_BATCH_STRUCTURAL = frozenset(("constant", "parameter", "tuple", "get-tuple-element"))
# Shape ops that are identities when both operand and result are scalars.
_SCALAR_IDENTITIES = frozenset(("broadcast", "reshape", "bitcast", "copy"))
_BATCH_CALLS = frozenset(("call", "fusion"))
# Ops whose result is (or holds) values that exist already: they allocate no new arrays.
_ALIASING = frozenset(("parameter", "tuple", "get-tuple-element", "bitcast",
                       "opt-barrier", "after-all", "add-dependency"))
# Ops that run the computations they call with their own intermediates (not batched).
_RUNS_CALLEES = frozenset(("call", "fusion", "while", "conditional"))


class Observer(Protocol):
    """Sees the values an unbatched run makes: `enter` when a computation starts (called from
    inside the handler of the instruction last announced by `before`, or for the entry),
    `value` for each parameter and instruction result, `leave` when it ends (also on error).

    `before` may return the value the instruction makes when the observer knows it already
    (the same instruction of another module on the same operand values): it is used instead
    of computing it, and still reported to `value`."""

    def enter(self, computation: Computation) -> None: ...

    def before(self, instruction: Instruction) -> Value | None: ...

    def value(self, instruction: Instruction, value: Value) -> None: ...

    def leave(self) -> None: ...


@dataclass
class _Step:
    handler: Handler
    instruction: Instruction
    operands: tuple[int, ...]
    release: tuple[int, ...]  # slots whose last use is this step
    declared: object  # what the result must be: see `_declared`
    # (slot, index in the entry's root tuple) of the outputs this step reads last before the
    # root, or makes when only the root reads them: handed to `output_sink` after it runs.
    handed_over: tuple[tuple[int, int], ...] = ()


@dataclass
class _Plan:
    computation: Computation
    size: int
    parameters: tuple[tuple[int, int], ...]  # (slot, parameter number)
    steps: tuple[tuple[int, _Step], ...]
    root: int
    batched: bool = False


def _is_scalar_shape(instruction: Instruction) -> bool:
    shape = instruction.shape
    if shape.is_tuple:
        return all(s.is_array and not s.dims for s in shape.tuple_shapes)
    return not shape.dims


class Interpreter:
    """Evaluates computations of one module; plans are compiled once and reused."""

    def __init__(self, module: HloModule, observer: Observer | None = None,
                 flush_subnormals: bool = False,
                 output_sink: Callable[[int, Value], None] | None = None) -> None:
        self.module = module
        self.observer = observer
        self.flush_subnormals = flush_subnormals  # the platform's DAZ/FTZ (float_environment)
        self.device: DeviceContext | None = None  # set by an SPMD run (`partitioned.run_devices`)
        self._plans: dict[tuple[str, bool], _Plan] = {}
        self._peaks: dict[str, int] = {}  # most bytes a computation holds at once
        self._memory_limit = memory.memory_limit()
        self._batchable: dict[str, bool] = {}
        self._owners: dict[int, Computation] | None = None
        # Takes each array of the entry's root tuple (index, value) once nothing but the root
        # reads it (as it is made, or after its last other reader) instead of the root holding
        # it to the end: a caller that reduces the result as it arrives then never holds all
        # of it. The root's value has None in those places. When it is set, the memory check
        # counts those arrays as freed there.
        self.output_sink = output_sink

    # -- computations -------------------------------------------------------------------

    def computation(self, name: str) -> Computation:
        try:
            return self.module.by_name[name]
        except KeyError:
            raise EvaluationError(f"no computation named {name}") from None

    def call(self, name: str, arguments: Sequence[Value]) -> Value:
        """Evaluate computation `name` on `arguments`."""
        return self._run(self._plan(name, batched=False), arguments)

    def batchable(self, name: str) -> bool:
        """True when `name` (and all it calls) is scalar and elementwise, so it may be run
        on arrays of scalars at once."""
        known = self._batchable.get(name)
        if known is not None:
            return known
        self._batchable[name] = False  # guards recursion
        computation = self.computation(name)
        result = all(self._instruction_batchable(i) for i in computation.instructions)
        self._batchable[name] = result
        return result

    def _instruction_batchable(self, instruction: Instruction) -> bool:
        opcode = instruction.opcode
        if not _is_scalar_shape(instruction):
            return False
        if opcode in ELEMENTWISE or opcode in _BATCH_STRUCTURAL:
            return True
        if opcode in _SCALAR_IDENTITIES:
            return True  # result is scalar; operand of broadcast/reshape of a scalar is too
        if opcode in _BATCH_CALLS:
            return all(self.batchable(c) for c in instruction.called_computations)
        return False

    def call_batched(self, name: str, arguments: Sequence[Value]) -> Value:
        """Evaluate scalar computation `name` with arrays of scalars as arguments (all
        arguments broadcast against each other). Callers check `batchable(name)` first."""
        return self._run(self._plan(name, batched=True), arguments)

    def apply_scalar(self, name: str, arguments: Sequence[np.ndarray]) -> Value:
        """Apply scalar computation `name` elementwise over broadcastable arrays.

        Batched when possible; otherwise one call per element (slow, but exact).
        """
        if self.batchable(name):
            return self.call_batched(name, arguments)
        arrays = np.broadcast_arrays(*[np.asarray(a) for a in arguments])
        shape = arrays[0].shape if arrays else ()
        results = [
            self.call(name, [a[index] for a in arrays]) for index in np.ndindex(shape)
        ]
        if not results:
            raise Unsupported("empty elementwise application of a non-elementwise computation")
        if isinstance(results[0], tuple):
            return tuple(
                np.array([r[k] for r in results]).reshape(shape)
                for k in range(len(results[0]))
            )
        return np.array(results).reshape(shape)

    def evaluate_cone(self, name: str, root: str, parameters: dict[int, Value]) -> Value:
        """Evaluate instruction `root` of scalar computation `name`, batched, from the given
        parameters only (raises KeyError when the cone needs another parameter)."""
        computation = self.computation(name)
        needed: set[str] = set()
        pending = [root]
        while pending:
            current = pending.pop()
            if current in needed:
                continue
            needed.add(current)
            pending.extend(computation.by_name[current].operands)
        values: dict[str, Value] = {}
        for instruction in computation.instructions:
            if instruction.name not in needed:
                continue
            if not self._instruction_batchable(instruction):
                raise Unsupported(f"{instruction.opcode} in a comparator")
            if instruction.opcode == "parameter":
                values[instruction.name] = parameters[instruction.parameter_number or 0]
                continue
            handler = self._handler(computation, instruction, batched=True)
            values[instruction.name] = handler(
                self, instruction, [values[o] for o in instruction.operands]
            )
        return values[root]

    def operand_shape(self, instruction: Instruction, index: int) -> Shape:
        """The declared shape (with layout) of `instruction`'s operand `index`."""
        return self.operand(instruction, index).shape

    def operand(self, instruction: Instruction, index: int) -> Instruction:
        """The instruction that makes `instruction`'s operand `index`."""
        if self._owners is None:
            self._owners = {
                id(i): c for c in self.module.computations for i in c.instructions
            }
        owner = self._owners.get(id(instruction))
        if owner is None:
            raise EvaluationError(f"{instruction.name} is not part of the module")
        return owner.by_name[instruction.operands[index]]

    # -- plans ----------------------------------------------------------------------------

    def _handler(self, computation: Computation, instruction: Instruction,
                 batched: bool) -> Handler:
        """The function evaluating `instruction` (batched: on arrays of its scalars)."""
        if not batched:
            handler = handler_for(instruction.opcode)
        elif instruction.opcode == "bitcast":
            handler = _scalar_bitcast
        elif instruction.opcode in _SCALAR_IDENTITIES:
            handler = _first_operand
        elif instruction.opcode in _BATCH_CALLS:
            handler = _batched_call
        else:
            handler = handler_for(instruction.opcode)
        operand_shapes = [computation.by_name[o].shape for o in instruction.operands]
        handler = sub_byte.adapt(handler, instruction, operand_shapes)
        return flushing(handler) if self.flush_subnormals else handler

    def _plan(self, name: str, batched: bool) -> _Plan:
        plan = self._plans.get((name, batched))
        if plan is None:
            plan = self._compile(self.computation(name), batched)
            self._plans[(name, batched)] = plan
        return plan

    def _compile(self, computation: Computation, batched: bool) -> _Plan:
        slots = {instruction.name: i for i, instruction in enumerate(computation.instructions)}
        last_use: dict[int, int] = {}
        for position, instruction in enumerate(computation.instructions):
            for operand in instruction.operands:
                if operand not in slots:
                    raise EvaluationError(
                        f"{instruction.name}: operand {operand} is not defined in "
                        f"{computation.name}"
                    )
                last_use[slots[operand]] = position
        root = slots.get(computation.root_name)
        if root is None:
            raise EvaluationError(f"{computation.name}: root {computation.root_name} missing")
        last_use.pop(root, None)
        released: dict[int, list[int]] = {}
        for slot, position in last_use.items():
            released.setdefault(position, []).append(slot)
        outputs = self._handed_over(computation, slots, batched)
        if not batched:  # a batched plan's shapes are scalars: its arrays are its callers'
            self._check_memory(computation, released,
                               outputs if self.output_sink is not None else {})
        parameters = []
        steps = []
        for position, instruction in enumerate(computation.instructions):
            if instruction.opcode == "parameter":
                parameters.append((position, instruction.parameter_number or 0))
                continue
            handler = self._handler(computation, instruction, batched)
            steps.append((position, _Step(
                handler, instruction,
                tuple(slots[o] for o in instruction.operands),
                tuple(released.get(position, ())),
                None if batched else _declared(instruction.shape),
                tuple(outputs.get(position, ())),
            )))
        return _Plan(computation, len(computation.instructions), tuple(parameters),
                     tuple(steps), root, batched)

    def _handed_over(self, computation: Computation, slots: dict[str, int],
                     batched: bool) -> dict[int, list[tuple[int, int]]]:
        """For the entry: by position, the (slot, index in the root tuple) of each array the
        root reads once that nothing reads after that position but the root (its last other
        reader, or itself): what `output_sink` takes there."""
        root = computation.root
        if batched or computation.name != self.module.entry_name or root.opcode != "tuple":
            return {}
        last_reader: dict[str, int] = {}
        for position, instruction in enumerate(computation.instructions):
            if instruction is not root:
                for operand in instruction.operands:
                    last_reader[operand] = position
        reads = Counter(root.operands)
        handed: dict[int, list[tuple[int, int]]] = {}
        for index, name in enumerate(root.operands):
            slot = slots[name]
            if reads[name] == 1 and root.shape.tuple_shapes[index].is_array \
                    and computation.instructions[slot].opcode != "parameter":
                handed.setdefault(last_reader.get(name, slot), []).append((slot, index))
        return handed

    def _check_memory(self, computation: Computation, released: dict[int, list[int]],
                      handed: dict[int, list[tuple[int, int]]]) -> None:
        """Refuse, before anything is allocated, a computation whose declared arrays exceed
        the memory limit: one array alone, or the most it holds at once (its live values plus
        what the computations it runs hold; the outputs `handed` over until then)."""
        sizes = [i.shape.nbytes for i in computation.instructions]
        live = peak = 0
        for position, instruction in enumerate(computation.instructions):
            size = sizes[position]
            if size > self._memory_limit:  # described only then: this runs per instruction
                memory.check(size, f"{computation.name}/{instruction.name} "
                             f"{_describe_shape(instruction.shape)}", self._memory_limit)
            new = 0 if instruction.opcode in _ALIASING and instruction.opcode != "parameter" \
                else size
            inner = max((self._peak(name) for name in instruction.called_computations
                         if instruction.opcode in _RUNS_CALLEES), default=0)
            peak = max(peak, live + inner + new)
            live += new - sum(sizes[slot] for slot in released.get(position, ()))
            live -= sum(sizes[slot] for slot, _ in handed.get(position, ())
                        if computation.instructions[slot].opcode not in _ALIASING)
        memory.check(peak, f"the values {computation.name} holds at once", self._memory_limit)
        self._peaks[computation.name] = peak

    def holds_at_once(self, name: str) -> int:
        """The most bytes an evaluation of computation `name` holds at once, from its
        declared shapes (what the memory check counts); raises `OverMemoryLimit` beyond the
        limit."""
        return self._peak(name)

    def _peak(self, name: str) -> int:
        if name not in self._peaks:
            self._plan(name, batched=False)  # compiling checks it and records its peak
        return self._peaks.get(name, 0)

    def _run(self, plan: _Plan, arguments: Sequence[Value]) -> Value:
        if self.observer is not None and not plan.batched:
            return self._run_observed(plan, arguments, self.observer)
        values = _bound_values(plan, arguments)
        sink = self.output_sink
        step = None
        try:
            for slot, step in plan.steps:
                value = values[slot] = step.handler(self, step.instruction,
                                                    [values[i] for i in step.operands])
                if step.declared is not None and not (sink is not None and slot == plan.root):
                    _check_result(step, value, step.declared)
                if sink is not None:
                    for output, index in step.handed_over:
                        sink(index, values[output])
                        values[output] = None
                if step.release:
                    for released in step.release:
                        values[released] = None
        except (Unsupported, EvaluationError):
            raise
        except _HANDLER_ERRORS as error:
            raise _failed(plan, step, error) from error
        return values[plan.root]

    def _run_observed(self, plan: _Plan, arguments: Sequence[Value],
                      observer: Observer) -> Value:
        """`_run` telling `observer` each value as it is made (kept apart from the fast path)."""
        instructions = plan.computation.instructions
        values = _bound_values(plan, arguments)
        observer.enter(plan.computation)
        sink = self.output_sink
        step = None
        try:
            for slot, _number in plan.parameters:
                observer.value(instructions[slot], values[slot])
            for slot, step in plan.steps:
                known = observer.before(step.instruction)
                value = values[slot] = known if known is not None else step.handler(
                    self, step.instruction, [values[i] for i in step.operands])
                if step.declared is not None and not (sink is not None and slot == plan.root):
                    _check_result(step, value, step.declared)
                observer.value(step.instruction, values[slot])
                if sink is not None:
                    for output, index in step.handed_over:
                        sink(index, values[output])
                        values[output] = None
                for released in step.release:
                    values[released] = None
        except (Unsupported, EvaluationError):
            raise
        except _HANDLER_ERRORS as error:
            raise _failed(plan, step, error) from error
        finally:
            observer.leave()
        return values[plan.root]


# What a handler raises on operands it cannot take: an evaluation error naming the instruction.
_HANDLER_ERRORS = (ValueError, IndexError, TypeError, KeyError, OverflowError)


def _bound_values(plan: _Plan, arguments: Sequence[Value]) -> list[Value]:
    """The plan's value slots with its parameters bound to `arguments`."""
    values: list[Value] = [None] * plan.size
    for slot, number in plan.parameters:
        if number >= len(arguments):
            raise EvaluationError(f"{plan.computation.name} takes parameter {number}; "
                                  f"got {len(arguments)} arguments")
        values[slot] = arguments[number]
    return values


def _failed(plan: _Plan, step: _Step | None, error: Exception) -> EvaluationError:
    where = f"{step.instruction.name} ({step.instruction.opcode})" if step else "?"
    return EvaluationError(f"{plan.computation.name}/{where}: {error}")


def _declared(shape: Shape) -> object:
    """What a result of `shape` must be, to check each result cheaply: (dims, dtype) for an
    array, a tuple of those for a tuple, None where nothing is checked (token, opaque, a type
    the evaluator cannot hold, which its handler reports)."""
    if shape.is_tuple:
        elements = tuple(_declared(element) for element in shape.tuple_shapes)
        return elements if any(e is not None for e in elements) else None
    if not shape.is_array:
        return None
    try:
        return tuple(shape.dims), dtype_of(shape.element_type)
    except Unsupported:
        return None


def _check_result(step: _Step, value: Value, declared: object) -> None:
    """Raise when a result is not of its declared shape and type: a module whose attributes
    disagree with its shapes (a `pad` giving f32[10] for f32[4]) is not judged on made-up
    values, and no result grows past what the memory check sized."""
    if isinstance(declared, tuple) and len(declared) == 2 and isinstance(declared[1], np.dtype):
        dims, dtype = declared
        shape = getattr(value, "shape", None)
        if shape == dims and getattr(value, "dtype", None) == dtype:
            return
        if shape is None and not isinstance(value, tuple):
            value = np.asarray(value)  # a handler's numpy or Python scalar
            if value.shape == dims and value.dtype == dtype:
                return
        raise _wrong_result(step, value)
    if not isinstance(value, tuple) or not isinstance(declared, tuple) \
            or len(value) != len(declared):
        raise _wrong_result(step, value)
    for element, expected in zip(value, declared, strict=True):
        if expected is not None:
            _check_result(step, element, expected)


def _wrong_result(step: _Step, value: Value) -> EvaluationError:
    instruction = step.instruction
    if isinstance(value, tuple):
        got = f"a tuple of {len(value)}"
    else:
        array = np.asarray(value)
        got = f"{array.dtype}[{','.join(str(d) for d in array.shape)}]"
    return EvaluationError(
        f"{instruction.name} ({instruction.opcode}): its result is {got}, its declared "
        f"shape {_describe_shape(instruction.shape)}; the module's attributes and shapes "
        "disagree")


def _describe_shape(shape: Shape) -> str:
    if shape.is_tuple:
        return "(" + ", ".join(_describe_shape(e) for e in shape.tuple_shapes) + ")"
    return f"{shape.element_type}[{','.join(str(d) for d in shape.dims)}]"


def _first_operand(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
    return operands[0]


def _scalar_bitcast(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
    """A scalar-to-scalar bitcast may change the element type (same width): reinterpret."""
    target = dtype_of(instruction.shape.element_type)
    value = np.asarray(operands[0])
    if value.dtype == target:
        return value
    if value.dtype.itemsize != target.itemsize:
        raise EvaluationError(f"{instruction.name}: bitcast changes the element size")
    return contiguous(value).view(target)


def _batched_call(interpreter: Interpreter, instruction: Instruction, operands: list) -> Value:
    return interpreter.call_batched(instruction.called_computations[0], operands)

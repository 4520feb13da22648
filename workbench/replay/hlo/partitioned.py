"""Running a module over many devices on one CPU (`spmd.py` says how the devices meet):
every device's result (`run_devices`), and a step evaluated as XLA would run it, partitioned
or global (`evaluate_partitioned`). Above the interpreter: it evaluates modules.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from workbench.hlo_ir import HloModule, LiteralValue, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.sharding import Sharding, join_shards, shard_of
from workbench.replay.hlo.spmd import (
    Aborted,
    DeviceContext,
    Partitioning,
    Recording,
    Rendezvous,
    needs_devices,
)
from workbench.replay.processes import memory


class InterpreterPool:
    """The per-device interpreters of the last few modules run, kept between evaluations:
    their plans compile once per step, as `Interpreter` does for one device, instead of once
    per device and evaluation (bisection, localization and judgment evaluate a step again).
    A set is lent to one run at a time; the pool keeps its modules alive, so at most a few."""

    def __init__(self, modules: int = 4) -> None:
        self.modules = modules
        self._idle: OrderedDict[tuple, list[Interpreter]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, module: HloModule, devices: int, flush_subnormals: bool) -> list[Interpreter]:
        key = self._key(module, devices, flush_subnormals)
        with self._lock:
            idle = self._idle.pop(key, None)
        if idle is not None and idle[0].module is module:
            return idle
        return [Interpreter(module, flush_subnormals=flush_subnormals) for _ in range(devices)]

    def give_back(self, module: HloModule, interpreters: list[Interpreter]) -> None:
        for interpreter in interpreters:
            interpreter.device = None  # holds the run's rendezvous and recording
        key = self._key(module, len(interpreters), interpreters[0].flush_subnormals)
        with self._lock:
            self._idle[key] = interpreters
            while len(self._idle) > self.modules:
                self._idle.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._idle.clear()

    @staticmethod
    def _key(module: HloModule, devices: int, flush_subnormals: bool) -> tuple:
        # plans were checked against the memory limit when compiled
        return id(module), devices, flush_subnormals, memory.memory_limit()


INTERPRETERS = InterpreterPool()


def run_devices(
    module: HloModule,
    arguments: Sequence[Sequence[LiteralValue]],
    num_partitions: int,
    replica_count: int,
    flush_subnormals: bool = False,
    recording: Recording | None = None,
) -> list[LiteralValue]:
    """Every device's result of `module`'s entry, device d on `arguments[d]`; with
    `recording`, what every collective exchanged is kept in it."""

    devices = num_partitions * replica_count
    interpreters = INTERPRETERS.take(module, devices, flush_subnormals)
    # every device holds its values at the same time: the estimate covers them all
    memory.check(
        devices * interpreters[0].holds_at_once(module.entry.name),
        f"the values {devices} devices hold at once",
    )
    rendezvous = Rendezvous(devices)
    results: list[LiteralValue | None] = [None] * devices
    errors: list[BaseException | None] = [None] * devices

    def run(device: int) -> None:
        interpreter = interpreters[device]
        interpreter.device = DeviceContext(
            device, num_partitions, replica_count, rendezvous, recording
        )
        try:
            results[device] = evaluate_module(
                module,
                arguments[device],
                interpreter=interpreter,
                flush_subnormals=flush_subnormals,
            )
        except BaseException as error:  # reported below, after every thread stopped
            errors[device] = error
            rendezvous.abort()

    threads = [threading.Thread(target=run, args=(d,), daemon=True) for d in range(devices)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = next(
        (e for e in errors if e is not None and not isinstance(e, Aborted)),
        next((e for e in errors if e is not None), None),
    )
    if first is not None:
        raise first
    INTERPRETERS.give_back(module, interpreters)
    return [result for result in results if result is not None]  # every device made one


def shards_of(sharding: Sharding, value: LiteralValue, device: int) -> LiteralValue:
    if sharding.kind == "tuple":
        if not isinstance(value, tuple) or len(value) != len(sharding.elements):
            raise EvaluationError("a tuple sharding on a value that is not such a tuple")
        return tuple(shards_of(s, v, device) for s, v in zip(sharding.elements, value, strict=True))
    return shard_of(sharding, np.asarray(value), device)


def _joined(sharding: Sharding, values: list[LiteralValue], shape: Shape) -> LiteralValue:
    """The global result of `shape` from every device's."""
    if shape.is_tuple:
        count = len(shape.tuple_shapes)
        elements = sharding.elements if sharding.kind == "tuple" else (sharding,) * count
        if len(elements) != count:
            raise EvaluationError("the output sharding does not match the result tuple")
        return tuple(
            _joined(s, [v[k] for v in values], shape.tuple_shapes[k])
            for k, s in enumerate(elements)
        )
    shards = {device: np.asarray(value) for device, value in enumerate(values)}
    joined = join_shards(sharding, shards, shape.dims)
    if joined.shape != shape.dims:
        raise EvaluationError(
            f"the devices' results joined by {sharding.kind} sharding have shape "
            f"{list(joined.shape)}, the reference's {list(shape.dims)}"
        )
    return joined


def has_global_shapes(module: HloModule, arguments: Sequence[LiteralValue]) -> bool:
    """True when `arguments` have the entry parameters' (global) shapes."""

    def same(shape: Shape, value: LiteralValue) -> bool:
        if shape.is_tuple:
            return isinstance(value, tuple) and all(
                same(s, v) for s, v in zip(shape.tuple_shapes, value, strict=False)
            )
        return not isinstance(value, tuple) and tuple(np.shape(value)) == shape.dims

    parameters = module.entry.parameters
    return len(parameters) == len(arguments) and all(
        same(p.shape, a) for p, a in zip(parameters, arguments, strict=True)
    )


def evaluate_partitioned(
    module: HloModule,
    arguments: Sequence[LiteralValue],
    partitioning: Partitioning,
    result_shape: Shape,
    flush_subnormals: bool = False,
) -> LiteralValue:
    """The global result (of `result_shape`, the reference's) of a step of a partitioned
    module on global `arguments`."""

    devices = partitioning.devices
    counts = (partitioning.num_partitions, partitioning.replica_count)
    if has_global_shapes(module, arguments):
        if not needs_devices(module):
            return evaluate_module(module, arguments, flush_subnormals=flush_subnormals)
        return run_devices(module, [arguments] * devices, *counts, flush_subnormals)[0]
    if partitioning.parameters is None:
        raise Unsupported("a per-device step of a module whose parameter shardings are unknown")
    if len(partitioning.parameters) != len(arguments):
        raise EvaluationError(
            f"{len(arguments)} arguments for {len(partitioning.parameters)} parameter shardings"
        )
    per_device = [
        [shards_of(s, a, d) for s, a in zip(partitioning.parameters, arguments, strict=True)]
        for d in range(devices)
    ]
    results = run_devices(module, per_device, *counts, flush_subnormals)
    # an output no sharding was given or propagated to is replicated, as the partitioner
    # makes it
    return _joined(partitioning.result or Sharding("replicated"), results, result_shape)

"""The Backend protocol: what replay, bisect, triage and the TUI need from an IR, and nothing
more, so none of them cares whether a module's steps are HLO or MLIR.

A backend is opened for one module of one dump. It says which steps it can replay (in
timeline order; the first is the reference), where an execution's arguments and recorded
result are, what the entry parameters look like (for fake data and `.npy` checks), and
evaluates one step on given arguments, raising `Unsupported` for what it cannot do.
Backends are plain picklable objects: replays send them to worker processes.

Backends are registered by name in `BACKENDS` as `"package.module:function"`, where the
function takes `(root, module)` and returns a backend or None when the module is not for it.
The registry is read lazily so that registering costs no import. The MLIR backend registers
here as `"mlir"`. Since worker processes import backends afresh, a backend is registered by
editing `BACKENDS` in this file, or named by its import path (`open_backend(name=...)`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from workbench.hlo_ir import HloModule, LiteralValue, Shape, numpy_dtype
from workbench.model import Execution, Module, Step
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.inputs import ParamSpec

if TYPE_CHECKING:
    from workbench.replay.hlo.spmd import Partitioning
    from workbench.replay.judge.noise.model import Noise


class StepEvaluator(Protocol):
    """What evaluating one step needs: a `Backend`, or a wrapper evaluating its steps another
    way (in f64, with random rounding, with subnormals flushed)."""

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue: ...


@runtime_checkable
class Backend(Protocol):
    """Replays one module's steps. Implementations must be picklable."""

    name: str
    root: Path
    module: Module

    def steps(self) -> list[Step]:
        """The replayable steps, in timeline order; the first one is the reference."""
        ...

    def parameter_specs(self) -> list[ParamSpec] | None:
        """The entry parameters' types (for fake data and input checks); None if unknown."""
        ...

    def non_negative_parameters(self) -> frozenset[int]:
        """The entry parameters (by number) fake data draws non-negative."""
        ...

    def recorded(self, execution: Execution) -> tuple[list[LiteralValue], LiteralValue | None]:
        """An execution's arguments and its recorded result (None when it has none).

        Raises `workbench.loader.ReadError` when the execution cannot be read.
        """
        ...

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """The result of the IR of `step` on `arguments`.

        Raises `Unsupported` for what the evaluator does not implement, `EvaluationError` for
        IR it cannot evaluate, `ReadError` for a step file it cannot read.
        """
        ...


# What a backend may also do (`HloBackend` does all; the MLIR backend has a shadow only).
@runtime_checkable
class EvaluatesShadow(Protocol):
    def evaluate_shadow(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """`step` with every float type computed in f64, on widened arguments."""
        ...


@runtime_checkable
class EvaluatesNoise(Protocol):
    def evaluate_noise(self, step: Step, arguments: Sequence[LiteralValue]) -> Noise:
        """`step` evaluated with random rounding: the rounding noise inside it (its range of
        the result kept on disk where only that fits)."""
        ...


@runtime_checkable
class EvaluatesFlushed(Protocol):
    def evaluate_flushed(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """`step` with subnormals read and written as zero."""
        ...

    def platform(self) -> str | None:
        """The platform the module was compiled for; None when the dump does not say."""
        ...


@dataclass(frozen=True)
class ShadowBackend:
    """`backend` evaluating in higher precision (its `evaluate_shadow`), so the shadow runs
    through the same runners as any step: in a worker, with the time limit and cancel."""

    inner: Backend

    @property
    def name(self) -> str:
        return f"{self.inner.name} (f64)"

    @property
    def root(self) -> Path:
        return self.inner.root

    @property
    def module(self) -> Module:
        return self.inner.module

    def steps(self) -> list[Step]:
        return self.inner.steps()

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        inner = self.inner
        if not isinstance(inner, EvaluatesShadow):
            raise EvaluationError(f"the {inner.name} backend has no f64 evaluation")
        return inner.evaluate_shadow(step, arguments)


@dataclass(frozen=True)
class NoiseBackend(ShadowBackend):
    """`backend` evaluating with random rounding (its `evaluate_noise`), through the runners
    like the shadow. `range_folder`: where a range of the result kept on disk goes when the
    stage runs in a worker process, whose result is pickled back (`memory.SharedDiskArray`:
    as its file); None where it stays in this process."""

    range_folder: str | None = None

    @property
    def name(self) -> str:
        return f"{self.inner.name} (random rounding)"

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> Any:
        inner = self.inner
        if not isinstance(inner, EvaluatesNoise):
            raise EvaluationError(f"the {inner.name} backend has no random-rounding evaluation")
        from workbench.replay.processes.memory import shared_disk_arrays

        with shared_disk_arrays(self.range_folder):
            return inner.evaluate_noise(step, arguments)


@dataclass(frozen=True)
class FlushedBackend(ShadowBackend):
    """`backend` evaluating with subnormals read and written as zero (its
    `evaluate_flushed`), through the same runners as any step."""

    @property
    def name(self) -> str:
        return f"{self.inner.name} (subnormals as zero)"

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        inner = self.inner
        if not isinstance(inner, EvaluatesFlushed):
            raise EvaluationError(f"the {inner.name} backend cannot flush subnormals")
        return inner.evaluate_flushed(step, arguments)


# name -> "module:function"; the function maps (root, module) to a Backend or None.
BACKENDS: dict[str, str] = {
    "hlo": "workbench.replay.backends:open_hlo_backend",
    "mlir": "workbench.replay.mlir.backend:open_mlir_backend",
}


class NoBackend(Exception):
    """No registered backend can replay this module; the message says why."""


def _factory(name: str) -> Callable[[Path, Module], Backend | None]:
    target = BACKENDS.get(name, name)
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise NoBackend(f"cannot load the replay backend {name!r} ({target}): {error}") from None


def open_backend(root: Path, module: Module, name: str | None = None) -> Backend:
    """The backend for `module`: the one named, or the first registered that accepts it.

    `name` is a registered name or an import path `package.module:function` (a backend that
    lives outside this package; worker processes import it by that path too).
    """
    if name is not None:
        if name not in BACKENDS and ":" not in name:
            raise NoBackend(f"no replay backend named {name!r}; known: {', '.join(BACKENDS)}")
        names = [name]
    else:
        names = list(BACKENDS)
    for candidate in names:
        backend = _factory(candidate)(root, module)
        if backend is not None:
            return backend
    irs: list[str] = sorted({step.ir for step in module.steps}) or ["none"]
    which = f"the {name} backend" if name else "no replay backend"
    raise NoBackend(f"{which} can replay {module.key} ({module.format}, IR: {', '.join(irs)})")


def shape_spec(shape: Shape) -> ParamSpec | None:
    """The parameter type of an HLO shape; None for tokens and other non-data types."""
    if shape.is_tuple:
        parts = [shape_spec(s) for s in shape.tuple_shapes]
        known = [part for part in parts if part is not None]
        return tuple(known) if len(known) == len(parts) else None
    if not shape.is_array:
        return None
    try:
        return (numpy_dtype(shape.element_type), tuple(shape.dims))
    except ValueError:
        return None


def has_elided_constant(module: HloModule) -> bool:
    return any(instruction.literal_elided for computation in module.computations
               for instruction in computation.instructions)


@dataclass
class HloBackend:
    """XLA modules: the `ir == "hlo"` steps, evaluated by the numpy HLO evaluator.

    Steps are read from their `.hlo.pb` when there is one (it always has every constant);
    a text dump that elides large constants as `{...}` cannot be evaluated faithfully.
    """

    root: Path
    module: Module
    name: str = "hlo"
    _partitioning: Partitioning | Literal[False] | None = field(default=None, repr=False,
                                                               compare=False)

    def steps(self) -> list[Step]:
        return self.module.ir_steps("hlo")

    def load(self, step: Step) -> HloModule:
        from workbench.loader import load_step_hlo

        hlo = load_step_hlo(self.root, step)
        if has_elided_constant(hlo):
            raise Unsupported("elided constant")
        return hlo

    def normwise_outputs(self, step: Step) -> Any:
        """Per output of `step`, whether a norm-wise accurate op makes it (`linalg`)."""
        from workbench.replay.hlo.linalg import normwise_outputs

        return normwise_outputs(self.load(step))

    def partitioning(self) -> Partitioning | None:
        """How the module spreads over devices (None for one device), from its steps (text
        or proto): the header's counts, and the entry shardings of the last step that still
        has the reference's parameter shapes (after sharding propagation)."""
        if self._partitioning is not None:
            return self._partitioning or None
        from workbench.loader import load_step_hlo
        from workbench.replay.hlo.spmd import Partitioning, device_counts, entry_shardings

        self._partitioning = False
        steps = self.steps()
        if not steps:
            return None
        reference = load_step_hlo(self.root, steps[0])
        partitions, replicas = device_counts(reference)
        if partitions * replicas == 1:
            return None
        shapes = [p.shape for p in reference.entry.parameters]
        parameters, result = entry_shardings(reference)
        for step in steps[1:]:
            module = load_step_hlo(self.root, step)
            if [p.shape.dims for p in module.entry.parameters] != [s.dims for s in shapes]:
                break
            found_parameters, found_result = entry_shardings(module)
            parameters = found_parameters or parameters
            result = found_result or result
        self._partitioning = Partitioning(partitions, replicas, parameters, result)
        return self._partitioning

    def per_device(self, step: Step, arguments: Sequence[LiteralValue]) -> bool:
        """True when `step` is a per-device program of a partitioned module (its parameters
        have shard shapes, not those of the global `arguments`)."""
        from workbench.replay.hlo.partitioned import has_global_shapes

        return self.partitioning() is not None and not has_global_shapes(self.load(step),
                                                                         arguments)

    def _evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
                  flush_subnormals: bool = False) -> LiteralValue:
        """`module` on global `arguments`: over every device when the module is partitioned."""
        from workbench.replay.hlo import evaluate_module
        from workbench.replay.hlo.partitioned import evaluate_partitioned

        partitioning = self.partitioning()
        if partitioning is None:
            from workbench.replay import spill

            interpreter = None
            if spill.should_spill(module.entry.root.shape.nbytes):
                interpreter = spill.OutputsToDisk(module, flush_subnormals=flush_subnormals)
            return evaluate_module(module, arguments, interpreter=interpreter,
                                   flush_subnormals=flush_subnormals)
        reference = self.load(self.steps()[0]).entry.root.shape
        return evaluate_partitioned(module, arguments, partitioning, reference,
                                    flush_subnormals)

    def parameter_specs(self) -> list[ParamSpec] | None:
        steps = self.steps()
        if not steps:
            return None
        from workbench.loader import load_step_hlo

        entry = load_step_hlo(self.root, steps[0]).entry
        specs = [shape_spec(parameter.shape) for parameter in entry.parameters]
        known = [spec for spec in specs if spec is not None]
        return known if len(known) == len(specs) else None

    def non_negative_parameters(self) -> frozenset[int]:
        """Those the first step's sign flow finds (`hlo/parameter_signs.py`): an optimizer's
        second moment, its step count."""
        steps = self.steps()
        if not steps:
            return frozenset()
        from workbench.loader import load_step_hlo
        from workbench.replay.hlo.parameter_signs import non_negative_parameters

        return non_negative_parameters(load_step_hlo(self.root, steps[0]))

    def recorded(self, execution: Execution) -> tuple[list[LiteralValue], LiteralValue | None]:
        from workbench.loader import load_snapshot, load_step_hlo
        from workbench.replay import recorded_io

        if execution.kind == recorded_io.KIND:
            root = load_step_hlo(self.root, self.steps()[0]).entry.root.shape
            results = root.tuple_shapes if root.is_tuple else (root,)
            return recorded_io.load_recorded(self.root, execution, self.parameter_specs(), root,
                                             [shape_spec(s) for s in results])
        snapshot = load_snapshot(self.root, execution)
        return list(snapshot.arguments), snapshot.result

    def evaluate(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        return self._evaluate(self.load(step), arguments)

    def evaluate_flushed(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """The result of `step` as XLA CPU computes it: every subnormal read and written as
        zero (`hlo.float_environment`)."""
        return self._evaluate(self.load(step), arguments, flush_subnormals=True)

    def platform(self) -> str | None:
        """The platform the module was compiled for (`cpu`, `gpu`), from its
        `<platform>_after_optimizations` dump; None when the dump has none."""
        return next((s.pipeline for s in self.steps() if s.kind == "after" and s.pipeline),
                    None)

    # `evaluate_shadow` takes the arguments as they are and widens the float ones where it
    # reads them (`hlo/shadow.py`): a replay need not hold a widened copy of them all.
    shadow_widens_arguments = True

    def evaluate_shadow(self, step: Step, arguments: Sequence[LiteralValue]) -> LiteralValue:
        """The result of `step` with every float type computed in f64 (complex in c128): the
        truth a result is judged against. Arguments may be widened already (used as they
        are) or not: float arrays in their declared types are widened at each use."""
        from workbench.replay.hlo.shadow import narrow_arguments, shadow_module
        from workbench.replay.judge.error_bound import widen

        module = self.load(step)
        narrow: frozenset[int] = frozenset()
        if self.partitioning() is None:  # shards are cut from whole, widened arguments
            narrow = narrow_arguments(module, arguments)
        wide = [value if number in narrow else widen(value)
                for number, value in enumerate(arguments)]
        return self._evaluate(shadow_module(module, narrow), wide)

    def noise_stage_problem(self, step: Step, arguments: Sequence[LiteralValue]) -> str | None:
        """Why `evaluate_noise` of `step` would not fit the memory limit (what it needs and
        how to raise it), sized from the declared shapes without evaluating; None if it fits."""
        from workbench.replay.judge.noise.run import noise_plan
        from workbench.replay.processes.memory import OverMemoryLimit

        try:
            noise_plan(self.load(step), arguments)
        except OverMemoryLimit as error:
            return str(error)
        return None

    def evaluate_noise(self, step: Step, arguments: Sequence[LiteralValue]) -> Noise:
        """`step` evaluated in f64 a few times with random rounding at each op's declared
        precision (`judge/noise/`): the rounding noise inside it. Arguments as
        `evaluate_shadow` takes them (no perturbation). Each of its evaluations is `report`ed
        as it starts, to whoever runs it (`processes/workers.py`)."""
        from workbench.replay.judge.noise.run import noise_of
        from workbench.replay.processes.workers import report

        return noise_of(self.load(step), arguments,
                        tell=lambda label, left: report((label, left)))


    def evaluate_gpu_allowance(self, step: Step, arguments: Sequence[LiteralValue],
                               platform_defaults: bool = True
                               ) -> tuple[LiteralValue, set[str]] | None:
        """The shadow of `step` with dot/convolution operands rounded as a GPU may round them
        (`gpu_numerics.py`; with `platform_defaults` off, only as their `algorithm=` says)
        and the roundings' names; None when the step has none."""
        from workbench.replay.hlo.shadow import shadow_module
        from workbench.replay.judge.gpu_numerics import gpu_rounded_module

        rounded = gpu_rounded_module(self.load(step), platform_defaults)
        if rounded is None:
            return None
        module, names = rounded
        return self._evaluate(shadow_module(module), arguments), names


def open_hlo_backend(root: Path, module: Module) -> HloBackend | None:
    return HloBackend(root, module) if module.ir_steps("hlo") else None

"""The one model every reader fills and every pane and command reads.

A `Dump` is a folder (or a single file) of compiler output. It has `Module`s; a module has an
ordered timeline of `Step`s (the IR after a pass), `Execution`s (recorded inputs and result),
and `Artifact`s (reports, buffer assignments, logs). Files that could not be read become
`Problem`s, never exceptions. Nothing here knows which compiler wrote the files.

Paths in the model are POSIX paths relative to `Dump.root`, so JSON output is stable and no
absolute path of the user leaks into it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

IRKind = Literal["hlo", "mlir"]


class Source(NamedTuple):
    """Where a piece of text or a proto lives: a whole file, a byte range of it, or an entry.

    `start`/`end` select the bytes of one IR dump inside a larger log; `entry` selects one
    element of a container file (the n-th pass of an mlir-trace proto). A NamedTuple, not a
    dataclass: indexing a 100,000-file folder builds one per file, and it is hashable for caches.
    """

    file: str
    start: int = 0
    end: int | None = None
    entry: int | None = None


@dataclass(frozen=True)
class Problem:
    """A file that could not be read, and why (shown to the user, never raised)."""

    file: str
    reason: str
    # Found by the listing to be no regular file (a FIFO, a dangling link...): never opened,
    # and whatever needs it cannot be judged.
    unreadable: bool = False


@dataclass
class Step:
    """The IR of one module at one point of its pipeline.

    `pass_name` is the pass that produced this IR ("before_optimizations" and the like for the
    endpoints); `next_pass` the pass that runs next when the dump names it. `xla_step` is XLA's
    own dump counter (None for endpoints and non-XLA steps). `changed` is None until content
    has been compared with the previous step.
    """

    index: int
    pass_name: str
    ir: IRKind
    # "input", "before", "pass", "after", "before-pass" (MLIR Before dumps), "pass-failed"
    # (MLIR's IR after a pass that failed)
    kind: str
    text: Source | None = None
    proto: Source | None = None
    pipeline: str | None = None
    next_pass: str | None = None
    xla_step: int | None = None
    scope: str | None = None  # MLIR: the operation the dump shows, e.g. "func.func @main"
    options: str | None = None  # MLIR pass options, as printed between braces
    changed: bool | None = None
    timing_s: float | None = None
    argument: str | None = None  # MLIR pass argument (its command-line name, `canonicalize`)
    target: str | None = None  # MLIR: the operation the pass ran on, when the dump names it
    pair: int | None = None  # index of the Before/After dump of the same pass run

    @property
    def file(self) -> str | None:
        """The file a user would open for this step: its text, else its proto."""
        source = self.text or self.proto
        return source.file if source else None

    @property
    def label(self) -> str:
        if self.xla_step is not None:
            return f"{self.xla_step:04d} {self.pass_name}"
        return self.pass_name


@dataclass
class Execution:
    """Recorded inputs (and usually the result) of one run of a module."""

    id: str
    file: str
    kind: str = "hlo-snapshot"  # or "ireereplay", "npy-inputs"


@dataclass
class Artifact:
    """A file that belongs to a module but is not a step: reports, buffer assignment, LLVM IR."""

    kind: str
    file: str
    label: str = ""  # what the file is about when its kind alone does not say (a kernel name)


@dataclass
class Module:
    """One compiled program: its pass timeline, its executions and artifacts.

    The index may leave `steps` to be made on demand (`defer_steps`): listing a folder then
    costs a compact record per file, and the `Step` objects are made for the modules that are
    opened, the first time `steps` is read, the same as they would have been made at once.
    """

    id: str
    name: str
    format: str
    steps: list[Step] = field(default_factory=list)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    # Unique within a dump: ids repeat when several runs share a folder (the index then
    # qualifies them with the run's timestamp and the module name).
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.id

    def defer_steps(self, make: Callable[[], list[Step]], count: int, per_pass: int,
                    files: tuple[str, ...]) -> None:
        """Make `steps` with `make()` when they are first read. `count` and `per_pass` are
        how many steps and per-pass steps it will make; `files` the files it makes them from
        (in a fixed order): equal files, equal steps."""
        self.__dict__.pop("_steps", None)
        self.__dict__["_deferred"] = (make, count, per_pass, files)

    @property
    def step_count(self) -> int:
        """`len(self.steps)`, without making deferred steps."""
        deferred = self.__dict__.get("_deferred")
        return deferred[1] if deferred is not None else len(self.steps)

    @property
    def pass_step_count(self) -> int:
        """How many steps are per-pass dumps (kind "pass"), without making deferred steps."""
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            return deferred[2]
        return sum(1 for step in self.steps if step.kind == "pass")

    def steps_key(self) -> tuple:
        """Equal keys mean equal steps; for deferred steps, without making them."""
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            return deferred[3]
        return tuple((s.pass_name, s.file, s.proto.file if s.proto else None, s.kind)
                     for s in self.steps)

    def step_files(self) -> set[str]:
        """The files of the timeline's steps, without making deferred steps."""
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            return set(deferred[3])
        return {source.file for step in self.steps for source in (step.text, step.proto)
                if source is not None}

    def files(self) -> set[str]:
        """Every file the module is made of: steps, executions, artifacts."""
        files = self.step_files()
        files.update(execution.file for execution in self.executions)
        files.update(artifact.file for artifact in self.artifacts)
        return files

    def ir_steps(self, ir: IRKind) -> list[Step]:
        return [step for step in self.steps if step.ir == ir]

    def __getstate__(self) -> dict:
        self.steps  # noqa: B018 (a deferred maker is a closure, which does not pickle)
        return self.__dict__


_MAKING_STEPS = threading.Lock()  # two threads reading deferred steps get the same objects


def _get_steps(module: Module) -> list[Step]:
    steps = module.__dict__.get("_steps")
    if steps is None:
        with _MAKING_STEPS:
            steps = module.__dict__.get("_steps")
            if steps is None:
                make = module.__dict__.pop("_deferred")[0]
                steps = module.__dict__["_steps"] = make()
    return steps


def _set_steps(module: Module, steps: list[Step]) -> None:
    module.__dict__.pop("_deferred", None)
    module.__dict__["_steps"] = steps


# A property over the dataclass field (set after the class is made, so the field keeps its
# default): the generated __init__, __eq__ and __repr__ go through it.
Module.steps = property(_get_steps, _set_steps, doc="The timeline, in pipeline order.")  # type: ignore[assignment]  # over the field


@dataclass
class Dump:
    """Everything found under one folder (or in one file)."""

    root: Path
    modules: list[Module] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    others: list[str] = field(default_factory=list)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def find_module(self, query: str) -> Module:
        """Look a module up by id (`module_0010`), name (`jit_ln`) or `id.name`.

        Raises KeyError with the candidates when the query is unknown or ambiguous.
        """
        exact = [m for m in self.modules if query in (m.key, m.id, f"{m.id}.{m.name}")]
        if len(exact) == 1:
            return exact[0]
        by_name = [m for m in self.modules if m.name == query]
        if len(by_name) == 1:
            return by_name[0]
        candidates = exact or by_name
        if candidates:
            listed = ", ".join(f"{m.id} ({m.name})" for m in candidates)
            raise KeyError(f"module {query!r} is ambiguous: {listed}")
        known = ", ".join(f"{m.id} ({m.name})" for m in self.modules[:20]) or "none"
        raise KeyError(f"no module {query!r} in {self.root}; modules: {known}")

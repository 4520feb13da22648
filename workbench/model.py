"""The one model every reader fills and every pane and command reads.

A `Dump` is a folder (or a single file) of compiler output. It has `Module`s; a module has an
ordered timeline of `Step`s (the IR after a pass), `Execution`s (recorded inputs and result),
and `Artifact`s (reports, buffer assignments, logs). Files that could not be read become
`Problem`s, never exceptions. Nothing here knows which compiler wrote the files.

Paths in the model are POSIX paths relative to `Dump.root`, so JSON output is stable and no
absolute path of the user leaks into it.
"""

from __future__ import annotations

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
    """One compiled program: its pass timeline, its executions and artifacts."""

    id: str
    name: str
    format: str  # "xla", "mlir-print-ir", "mlir-ir-tree", "mlir-trace", "mlir", "iree"
    steps: list[Step] = field(default_factory=list)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    # Unique within a dump: ids repeat when several runs share a folder (the index then
    # qualifies them with the run's timestamp and the module name).
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.id

    def ir_steps(self, ir: IRKind) -> list[Step]:
        return [step for step in self.steps if step.ir == ir]


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

"""The dump formats the index knows, each declared once: its name, the module of its reader,
the names it may claim (by suffix), the function that claims them and those that expand what
it claimed. Every claimer takes `(dump, paths)` and returns the paths it left.

The declarations live here rather than in each reader's module so that a listing imports a
reader only when some path may be its: importing every reader costs about 24 ms, a third of a
small `ls`. Order matters: earlier claimers see every path, later ones only what is left.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from workbench.model import Dump, Module

Claimer = Callable[[Dump, list[str]], list[str]]

# The names the MLIR claimers look at end in one of these (`mlir_files.SNIFF_SUFFIXES`; IR
# tree files end in `.mlir`).
MLIR_CANDIDATE_SUFFIXES = (".log", ".mlir", ".txt", ".err", ".out")


@dataclass(frozen=True)
class DumpFormat:
    name: str
    module: str  # the reader's module, imported on first use
    claim: str  # its function (dump, paths) -> the paths it left
    suffixes: tuple[str, ...] = ()  # it claims only names ending so (empty: any name)
    reads_names_only: bool = False  # it places unreadable entries by name (never opens them)

    def claimer(self) -> Claimer:
        function: Claimer = getattr(importlib.import_module(self.module), self.claim)
        return function

    def may_claim(self, paths: list[str]) -> bool:
        return not self.suffixes or any(path.endswith(self.suffixes) for path in paths)


@dataclass(frozen=True)
class Expansion:
    """A second pass over what a format claimed (the steps inside a log, say), run only when
    the dump holds a module it `expands`."""

    module: str
    function: str  # (dump) -> None
    expands: Callable[[Module], bool]

    def run(self, dump: Dump) -> None:
        getattr(importlib.import_module(self.module), self.function)(dump)


FORMATS: tuple[DumpFormat, ...] = (
    # Takes the listing in any order and hands on the rest sorted.
    DumpFormat("xla", "workbench.formats.xla_dump", "claim_xla", reads_names_only=True),
    DumpFormat("iree-replay", "workbench.formats.iree_replay", "claim_iree_replays",
               suffixes=(".ireereplay",)),
    DumpFormat("mlir-ir-tree", "workbench.formats.mlir_ir_tree", "claim_ir_trees",
               suffixes=MLIR_CANDIDATE_SUFFIXES),
    DumpFormat("mlir-files", "workbench.formats.mlir_files", "claim_mlir_files",
               suffixes=MLIR_CANDIDATE_SUFFIXES),
)

EXPANSIONS: tuple[Expansion, ...] = (
    Expansion("workbench.formats.mlir_files", "expand_print_ir",
              lambda m: m.format == "mlir-print-ir"),
    Expansion("workbench.formats.mlir_ir_tree", "expand_ir_trees",
              lambda m: m.format == "mlir-ir-tree"),
    Expansion("workbench.formats.mlir_files", "expand_reproducers",
              lambda m: m.format == "mlir-reproducer"),
    Expansion("workbench.formats.mlir_trace", "expand_mlir_traces",
              lambda m: any(artifact.kind == "mlir-trace" for artifact in m.artifacts)),
)

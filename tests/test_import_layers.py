"""Layers that point one way, checked on the import graph computed from the code
(`tests/import_graph.py`: ast over every module of `workbench/`).

Imports that run count: module-level ones, and imports inside functions (deferred: they run
when the function is called, so a cycle through one is a cycle all the same, only hidden).
Imports under `if TYPE_CHECKING:` never run; they form no cycle either: where a part needs
the types of what runs it, it sees it through a protocol (`tui/context.py` for the panes and
controls, `replay/localize/context.py` for the parts of a localization).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.import_graph import KINDS, cycles, import_graph, merged, module_files

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("module", "deferred")
# The UI: the TUI package, and the command that opens it.
UI = ("workbench.tui", "workbench.commands.tui")
# Not imported by the checks: `python -m workbench` runs the CLI; the proto generator needs
# the protogen extra.
NOT_IMPORTABLE = ("workbench.__main__", "workbench.protos.generate")


def layer(module: str) -> str:
    """A module's layer: its subpackage (`workbench.replay`), or itself at the top level."""
    return ".".join(module.split(".")[:2])


def is_ui(module: str) -> bool:
    return any(module == ui or module.startswith(ui + ".") for ui in UI)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return merged(import_graph(ROOT), RUNTIME)


def test_no_import_cycles(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_no_cycles_even_among_type_only_imports() -> None:
    """A module that needs another's types only sits above it all the same: a reader can
    take the modules in order, each using only what comes before it."""
    assert cycles(merged(import_graph(ROOT), KINDS)) == []


def test_no_type_only_cycles_in_the_ui() -> None:
    """A pane or control that imported the app class for its types would close one."""
    graph = merged(import_graph(ROOT), KINDS)
    assert [cycle for cycle in cycles(graph) if any(map(is_ui, cycle))] == []


def test_cycles_are_found() -> None:
    """The cycle finder finds what it must (so the test above can fail)."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph(ROOT)
    assert "workbench.sources" in graph["module"]["workbench.loader"]
    assert "workbench.formats.hlo_text" in graph["module"]["workbench.loader"]  # from-import
    assert "workbench.diff.hlo_text" in graph["deferred"]["workbench.diff.normalize"]
    assert "workbench.tui.context" in graph["typing"]["workbench.tui.panes.base"]
    assert "workbench.tui.context" not in graph["module"]["workbench.tui.panes.base"]


def test_layers_point_down(graph: dict[str, set[str]]) -> None:
    """Between subpackages (and top-level modules) imports go one way."""
    layers: dict[str, set[str]] = {layer(m): set() for m in graph}
    for module, imported in graph.items():
        layers[layer(module)] |= {layer(m) for m in imported if layer(m) != layer(module)}
    assert cycles(layers) == []


def test_only_the_ui_imports_the_ui(graph: dict[str, set[str]]) -> None:
    """The core never reaches up into the TUI (the CLI's entry point opens it on request)."""
    allowed = ("workbench.cli",)
    wrong = sorted(f"{module} -> {imported}" for module, targets in graph.items()
                   if not is_ui(module) and module not in allowed
                   for imported in targets if is_ui(imported))
    assert wrong == []


def test_core_imports_no_ui() -> None:
    """Importing any module outside the UI leaves textual and rich unimported (the CLI and
    other tools use the core without paying for the TUI)."""
    core = [m for m in module_files(ROOT) if not is_ui(m) and m not in NOT_IMPORTABLE]
    assert len(core) > 100  # every module of the core, found from the files
    code = (
        "import importlib, sys\n"
        f"for name in {core!r}:\n"
        "    importlib.import_module(name)\n"
        "    bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
        "    if bad:\n"
        "        sys.exit(f'{name} imports {bad}')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr or result.stdout


# The replay package's layers, lowest first (`workbench/replay/__init__.py` says what each
# owns): a module imports modules of its own layer or of those below it, never above.
REPLAY_LAYERS = [
    ("workbench.replay.errors", "workbench.replay.deadline"),
    ("workbench.replay.processes",),
    ("workbench.replay.hlo", "workbench.replay.mlir.interpreter", "workbench.replay.mlir.parse",
     "workbench.replay.mlir.evaluate", "workbench.replay.mlir.values",
     "workbench.replay.mlir.shadow", "workbench.replay.mlir.interpreters",
     "workbench.replay.mlir.dialects"),
    ("workbench.replay.judge",),
    ("workbench.replay.backends", "workbench.replay.inputs", "workbench.replay.recorded_io",
     "workbench.replay.iree_runner", "workbench.replay.steps", "workbench.replay.bisect",
     "workbench.replay.progress", "workbench.replay.parallel_verdict",
     "workbench.replay.spill",
     "workbench.replay.mlir.backend", "workbench.replay.mlir"),
    ("workbench.replay.localize",),
    ("workbench.replay.reduce",),
    ("workbench.replay.triage",),
]


def replay_layer(module: str) -> int | None:
    """The index of `module`'s layer in `REPLAY_LAYERS` (the longest prefix that names it)."""
    named = [(len(prefix), number) for number, prefixes in enumerate(REPLAY_LAYERS)
             for prefix in prefixes if module == prefix or module.startswith(prefix + ".")]
    return max(named)[1] if named else None


def test_every_replay_module_has_a_layer() -> None:
    modules = [m for m in module_files(ROOT) if m.startswith("workbench.replay.")]
    assert len(modules) > 60
    assert [m for m in modules if replay_layer(m) is None] == []


def test_replay_layers_point_down(graph: dict[str, set[str]]) -> None:
    upward = sorted(f"{module} -> {imported}" for module, targets in graph.items()
                    if (mine := replay_layer(module)) is not None
                    for imported in targets
                    if (theirs := replay_layer(imported)) is not None and theirs > mine)
    assert upward == []


def test_the_core_writes_no_json_and_draws_nothing() -> None:
    """`output/` (JSON shapes, progress, safe text), the commands and the app sit above the
    replay core: not even a type-only import reaches up to them."""
    graph = merged(import_graph(ROOT), KINDS)
    above = ("workbench.output", "workbench.commands", "workbench.tui", "workbench.cli")
    wrong = sorted(f"{module} -> {imported}" for module, targets in graph.items()
                   if module.startswith("workbench.replay")
                   for imported in targets if imported.startswith(above))
    assert wrong == []


def test_no_type_only_cycles_between_layers() -> None:
    """Even for their types, layers (replay's, and the top-level packages) point one way;
    within a layer, a module may name a type of one that imports it."""
    def part(module: str) -> str:
        number = replay_layer(module)
        return layer(module) if number is None else f"replay layer {number}"

    graph = merged(import_graph(ROOT), KINDS)
    parts: dict[str, set[str]] = {part(m): set() for m in graph}
    for module, imported in graph.items():
        if not is_ui(module):
            parts[part(module)] |= {part(m) for m in imported if part(m) != part(module)}
    assert cycles(parts) == []


def test_localizing_and_catching_a_parse_error_import_no_xdsl() -> None:
    """xDSL takes about a second to import: the MLIR evaluator imports it when an MLIR step is
    parsed, evaluated or localized, not when localization starts or a caller catches the
    parser's error (nor, so, when the tests that import them are collected)."""
    code = (
        "import sys\n"
        "import workbench.replay.localize.culprit\n"
        "from workbench.replay.errors import MlirParseError\n"
        "import workbench.replay.mlir.backend\n"
        "sys.exit('xdsl' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr or "xdsl was imported"

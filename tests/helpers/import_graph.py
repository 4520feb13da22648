"""The import graph of the `workbench` package, computed from the code with `ast`.

Every module under `workbench/` is parsed; each import of a `workbench` module becomes an
edge. Imports are told apart by when they run:

- "module": at import time (module level, including inside `try`/`if` at module level);
- "deferred": inside a function or method body, run when it is called;
- "typing": under `if TYPE_CHECKING:`, never run.

An edge goes to the most specific module that exists (`from workbench.formats import
hlo_text` is an edge to `workbench.formats.hlo_text`, `from workbench.loader import
ReadError` one to `workbench.loader`). Importing a submodule also runs its packages'
`__init__`; those implicit edges are left out, so a package whose `__init__` re-exports its
submodules is not a cycle by itself.

Run as a script, it prints the cycles (strongly connected components) of the module-level
graph and of the graph with deferred imports added: `python tests/helpers/import_graph.py [ROOT]`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = "workbench"
KINDS = ("module", "deferred", "typing")


def module_files(root: Path) -> dict[str, Path]:
    """Module name -> file, for every `.py` file of the package under `root`."""
    modules = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with its kind."""

    def walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, kind
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from walk(child, "typing" if kind == "typing" else "deferred")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), "typing")
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), kind)
            else:
                yield from walk(child, kind)

    yield from walk(tree, "module")


def _resolve(name: str, modules: Iterable[str]) -> str | None:
    """The longest prefix of the dotted `name` that is a module of the package."""
    known = set(modules)
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def import_graph(root: Path) -> dict[str, dict[str, set[str]]]:
    """kind -> module -> the package modules it imports in that kind of import."""
    modules = module_files(root)
    graph: dict[str, dict[str, set[str]]] = {kind: {m: set() for m in modules} for kind in KINDS}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, kind in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
            for target in targets:
                if not target.startswith(PACKAGE):
                    continue
                resolved = _resolve(target, modules)
                if resolved is not None and resolved != name:
                    graph[kind][name].add(resolved)
    return graph


def merged(graph: dict[str, dict[str, set[str]]], kinds: Iterable[str]) -> dict[str, set[str]]:
    """One graph of the edges of the given kinds."""
    kinds = list(kinds)
    return {m: set().union(*(graph[k][m] for k in kinds)) for m in graph[kinds[0]]}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so deep graphs cannot overflow the stack
        nonlocal counter
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(found)


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    graph = import_graph(root)
    for label, kinds in (("module-level", ["module"]),
                         ("module-level + deferred", ["module", "deferred"]),
                         ("all, type-only imports too", list(KINDS))):
        found = cycles(merged(graph, kinds))
        print(f"{label}: {len(found)} cycle(s)")
        for component in found:
            print("  " + " ".join(component))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""IR tree folders (`--mlir-print-ir-tree-dir=D`): one file per pass run, ordered back into a
timeline.

MLIR (`mlir/lib/Pass/IRPrinting.cpp`, `getOpAndSymbolNames`) writes each dump to
`D/<op>_<sym>/.../<op>_<sym>/<c1>_..._<ck>_<pass-argument>.mlir`: one folder per operation
from the top-level module down to the operation the pass ran on (op name with `.` turned
into `_`, then the symbol or `no-symbol-name`), and one counter per folder. Every operation
has its own print counter, starting at 0 and advanced each time that operation is printed;
`ci` is the value of the i-th ancestor's counter at the time (an ancestor never printed yet
reads 0, so its own first file is then numbered 1). Hence:
- files of one operation are in order of its own counter `ck`;
- a file whose ancestor counter is `c` was written after that ancestor's file `c` and before
  its file `c + 1`.
The names do not say in which order sibling operations (two functions of one module) ran in
the same round: the pass manager runs the nested pipeline on each in IR order (one after the
other when threading is disabled). The expander reads the parent's IR printed just before to
put siblings in that order; without it (`scan(expand=False)`) siblings are ordered by name.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from workbench.formats.mlir_print_ir import parse_header
from workbench.formats.mlir_text import (
    first_operation_line,
    operation_of_line,
    scope_label,
)
from workbench.model import Dump, Module, Problem, Source, Step
from workbench.sources import open_file

_FILE_RE = re.compile(r"^(?P<counters>\d+(?:_\d+)*)_(?P<argument>[^/]+)\.mlir$")
NO_SYMBOL = "no-symbol-name"
_PEEK_BYTES = 64 * 1024


def _is_op_folder(name: str) -> bool:
    # `<dialect>_<op>_<symbol>`: the op name has a dialect prefix, so at least two `_`.
    return name.count("_") >= 2


@dataclass
class TreeFile:
    """One dump file: its path, its folder chain below the tree root, counters and pass."""

    path: str
    chain: tuple[str, ...]  # op folders from the top-level module to the op it shows
    counters: tuple[int, ...]
    argument: str


def parse_tree_path(path: str, root_name: str) -> tuple[str, TreeFile] | None:
    """(top folder path, file) when `path` looks like an IR tree dump; None otherwise.

    The top folder path is relative to the scan root ("" when the scan root is the top-level
    module's folder itself; `root_name` is that folder's name).
    """
    directory, base = posixpath.split(path)
    match = _FILE_RE.match(base)
    if match is None:
        return None
    counters = tuple(int(c) for c in match["counters"].split("_"))
    n = len(counters)
    parts = directory.split("/") if directory else []
    if len(parts) >= n:
        chain = tuple(parts[len(parts) - n :])
        top = "/".join(parts[: len(parts) - n + 1])
    elif len(parts) == n - 1 and _is_op_folder(root_name):
        chain = (root_name, *parts)
        top = ""
    else:
        return None
    if not all(_is_op_folder(folder) for folder in chain):
        return None
    return top, TreeFile(path, chain, counters, match["argument"])


def order_key(file: TreeFile, sibling_rank: dict[tuple, int] | None = None) -> tuple:
    """Sort key putting tree files in run order (see the module docstring).

    Level i < k contributes (ci, 1, rank of the child op at level i+1); the last level
    (ck, 0): a nested file sorts after its ancestor's file with the same counter.
    `sibling_rank` maps (chain prefix, ancestor counter, child folder) to the child's
    position in the parent's IR; without it children are ranked by folder name.
    """
    key = []
    for i in range(len(file.counters) - 1):
        child = file.chain[i + 1]
        rank = None
        if sibling_rank is not None:
            rank = sibling_rank.get((file.chain[: i + 1], file.counters[i], child))
        key.append((file.counters[i], 1, (0, rank, child) if rank is not None else (1, 0, child)))
    key.append((file.counters[-1], 0, (0, 0, "")))
    return tuple(key)


def _module_name(top_folder: str) -> str:
    if top_folder.startswith("builtin_module_"):
        symbol = top_folder[len("builtin_module_") :]
        return "" if symbol == NO_SYMBOL else symbol
    return top_folder


def claim_ir_trees(dump: Dump, paths: list[str]) -> list[str]:
    """Claim IR tree dumps among `paths` (names only): one module per top-level operation."""
    trees: dict[str, list[TreeFile]] = defaultdict(list)
    unclaimed: list[str] = []
    for path in paths:
        parsed = parse_tree_path(path, dump.root.name)
        if parsed is None:
            unclaimed.append(path)
        else:
            trees[parsed[0]].append(parsed[1])
    for top, files in sorted(trees.items()):
        files.sort(key=order_key)
        _report_shared_folders(dump, files)
        top_folder = files[0].chain[0]
        module = Module(id=top or ".", name=_module_name(top_folder) or top_folder,
                        format="mlir-ir-tree")
        module.steps = _steps(files)
        dump.modules.append(module)
    return unclaimed


def _report_shared_folders(dump: Dump, files: list[TreeFile]) -> None:
    """Operations with the same name and no symbol (two `util.initializer`s) share a folder
    and interleave their counters: their files cannot be told apart, so say so."""
    seen: dict[tuple, str] = {}
    reported: set[tuple] = set()
    for file in files:
        key = (file.chain, file.counters)
        if key in seen and file.chain not in reported:
            reported.add(file.chain)
            folder = posixpath.dirname(file.path)
            dump.problems.append(Problem(folder, (
                "holds the dumps of several operations with the same name "
                f"({posixpath.basename(seen[key])} and {posixpath.basename(file.path)} share "
                "their counters): the order of their dumps within a round is approximate")))
        seen.setdefault(key, file.path)


def _fallback_label(folder: str) -> str:
    """`builtin_module_no-symbol-name` -> `builtin.module`; other folders stay as named."""
    if folder.endswith(f"_{NO_SYMBOL}"):
        op = folder[: -len(NO_SYMBOL) - 1]
        if op.count("_") == 1:
            return op.replace("_", ".")
    return folder


def _steps(files: list[TreeFile]) -> list[Step]:
    return [
        Step(index=index, pass_name=f.argument, ir="mlir", kind="pass", text=Source(f.path),
             scope="/".join(f.chain), argument=f.argument, target="/".join(f.chain))
        for index, f in enumerate(files)
    ]


# --- expansion: headers, readable scopes, sibling order from the parent's IR ---------------

def _read_head(path: Path, size: int) -> bytes:
    with open_file(path) as handle:
        return handle.read(size)


def _read_first_line(path: Path) -> bytes:
    """The header line (pass options can make it long); at most `_PEEK_BYTES`."""
    with open_file(path) as handle:
        data = handle.read(4096)
        while b"\n" not in data and len(data) < _PEEK_BYTES:
            more = handle.read(16384)
            if not more:
                break
            data += more
    return data.split(b"\n", 1)[0] + (b"\n" if b"\n" in data else b"")


def _tree_files(module: Module) -> list[TreeFile]:
    files = []
    for step in module.steps:
        assert step.text is not None and step.scope is not None
        chain = tuple(step.scope.split("/"))
        base = posixpath.basename(step.text.file)
        counters = tuple(int(c) for c in base.split("_", len(chain))[: len(chain)])
        files.append(TreeFile(step.text.file, chain, counters, step.argument or ""))
    return files


def _folder_patterns(folder: str) -> list[re.Pattern[str]]:
    """Ways the operation a folder names can start a line of its parent's printed IR.

    The folder is `<op with . as _>_<symbol>`; where the op name ends is unknown, so every
    split is tried (`_` in the op part matches `.` or `_`).
    """
    patterns = []
    for cut in (i for i, ch in enumerate(folder) if ch == "_"):
        op, symbol = folder[:cut], folder[cut + 1 :]
        if "_" not in op:
            continue
        op_re = "[._]".join(re.escape(part) for part in op.split("_"))
        if symbol == NO_SYMBOL:
            tail = r"(?![^\n]*(?:@|sym_name = ))"
        else:
            tail = rf'[^\n]*?(?:@|sym_name = ")"?{re.escape(symbol)}(?![\w$.-])'
        patterns.append(re.compile(rf'^[ \t]*(?:%[^=\n]*= )?"?{op_re}"?(?![\w.]){tail}',
                                   re.MULTILINE))
    return patterns


def _position(text: str, folder: str) -> int | None:
    positions = [m.start() for p in _folder_patterns(folder) if (m := p.search(text))]
    return min(positions) if positions else None


def expand_ir_trees(dump: Dump) -> None:
    """Read each tree file's header (pass name, options, Before/After), name scopes by their
    operations, and order sibling operations as their parent's IR lists them."""
    for module in dump.modules:
        if module.format != "mlir-ir-tree" or not module.steps:
            continue
        files = _tree_files(module)
        heads: dict[str, bytes] = {}
        for file in files:
            try:
                heads[file.path] = _read_first_line(dump.path(file.path))
            except OSError as error:
                dump.problems.append(Problem(file.path, f"cannot read: {error.strerror}"))
        ranks = _sibling_ranks(dump, files)
        files.sort(key=lambda f: order_key(f, ranks))
        labels = _readable_chains(dump, files)
        module.steps = []
        for index, file in enumerate(files):
            step = Step(index=index, pass_name=file.argument, ir="mlir", kind="pass",
                        text=Source(file.path), argument=file.argument)
            chain = labels.get(file.chain)
            step.scope = step.target = "/".join(chain) if chain else "/".join(file.chain)
            head = heads.get(file.path)
            if head is not None:
                _apply_header(dump, step, head)
            module.steps.append(step)
        _pair_before_after(module.steps)
        top = labels.get(files[0].chain[:1])
        if top and top[0].startswith("builtin.module @"):
            module.name = top[0].split("@", 1)[1]


def _pair_before_after(steps: list[Step]) -> None:
    """With `--mlir-print-ir-before` too, a Before file and the next After file of the same
    pass on the same operation are one run (MLIR numbers both from the op's counter)."""
    waiting: dict[tuple, int] = {}
    for step in steps:
        key = (step.scope, step.argument)
        if step.kind == "before-pass":
            waiting[key] = step.index
        elif key in waiting:
            before = waiting.pop(key)
            steps[before].pair, step.pair = step.index, before


def _apply_header(dump: Dump, step: Step, head: bytes) -> None:
    assert step.text is not None
    header = parse_header(head.decode("utf-8", "replace").rstrip("\r\n"))
    if header is None:
        dump.problems.append(Problem(step.text.file, "no IR dump header on the first line "
                                                     "(not written by MLIR's IR printer?)"))
        return
    step.pass_name = header.pass_name
    step.options = header.options if header.options is not None else ""
    if header.when == "Before":
        step.kind = "before-pass"
    elif header.failed:
        step.kind = "pass-failed"
    step.text = Source(step.text.file, len(head))


def _sibling_ranks(dump: Dump, files: list[TreeFile]) -> dict[tuple, int]:
    """(parent chain, parent counter, child folder) -> child's position in the parent's IR.

    Only rounds where several children ran need it. The parent's file with that counter was
    printed just before the children ran; when the parent has no such file, the closest
    earlier one (else later) of the parent or, failing that, of an ancestor is read.
    """
    children: dict[tuple, set[str]] = defaultdict(set)
    for file in files:
        for i in range(len(file.counters) - 1):
            children[(file.chain[: i + 1], file.counters[i])].add(file.chain[i + 1])
    by_chain: dict[tuple, list[TreeFile]] = defaultdict(list)
    for file in files:
        by_chain[file.chain].append(file)
    texts: dict[str, str] = {}
    ranks: dict[tuple, int] = {}
    for (parent, counter), folders in children.items():
        if len(folders) < 2:
            continue
        source = _parent_file(by_chain, parent, counter)
        if source is None:
            continue
        if source not in texts:
            try:
                with open_file(dump.path(source)) as handle:
                    texts[source] = handle.read().decode("utf-8", "replace")
            except OSError as error:
                dump.problems.append(Problem(source, f"cannot read: {error.strerror}"))
                texts[source] = ""
        text = texts[source]
        found = {folder: _position(text, folder) for folder in folders}
        placed = sorted((pos, folder) for folder, pos in found.items() if pos is not None)
        for rank, (_, folder) in enumerate(placed):
            ranks[(parent, counter, folder)] = rank
    return ranks


def _parent_file(by_chain: dict[tuple, list[TreeFile]], parent: tuple,
                 counter: int) -> str | None:
    for depth in range(len(parent), 0, -1):
        chain = parent[:depth]
        own = by_chain.get(chain, [])
        if not own:
            continue
        if depth == len(parent):
            earlier = [f for f in own if f.counters[-1] <= counter]
            later = [f for f in own if f.counters[-1] > counter]
            pick = (max(earlier, key=lambda f: f.counters[-1]) if earlier
                    else min(later, key=lambda f: f.counters[-1]))
        else:
            pick = own[0]
        return pick.path
    return None


def _readable_chains(dump: Dump, files: list[TreeFile]) -> dict[tuple, tuple[str, ...]]:
    """Folder chain -> operation labels (`func.func @main`), from one file per folder."""
    sample: dict[tuple, str] = {}
    for file in files:
        sample.setdefault(file.chain, file.path)
    labels: dict[str, str] = {}  # folder chain joined -> label of its last op
    for chain, path in sample.items():
        try:
            head = _read_head(dump.path(path), _PEEK_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        line = first_operation_line(head)
        found = operation_of_line(line) if line else None
        if found is not None:
            labels["/".join(chain)] = scope_label(*found)
    result: dict[tuple, tuple[str, ...]] = {}
    for chain in sample:
        parts = []
        for depth in range(1, len(chain) + 1):
            parts.append(labels.get("/".join(chain[:depth]), _fallback_label(chain[depth - 1])))
        result[chain] = tuple(parts)
        for depth in range(1, len(chain)):
            result.setdefault(chain[:depth], tuple(parts[:depth]))
    return result

"""`ls --check`: read every step and execution of a dump, and report what cannot be read.

Indexing looks at names only, so a damaged file shows up only when someone opens it. The check
opens everything once: each HLO step's text and proto (both, when both were dumped: a broken
text dump is worth knowing about even when the proto is fine), MLIR steps' text, and
snapshots. Every failure becomes a `Problem` (file and reason); nothing is raised, nothing is
cached (a check must not fill the cache the browser relies on), nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.loader import read_hlo_file, read_snapshot_file
from workbench.model import Dump, Problem, Source
from workbench.sources import ReadError, read_bytes, read_text

Check = Callable[[], object]


def check_dump(dump: Dump, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Problems found by reading every step and execution of `dump` (in file order)."""
    checks = list(_checks(dump.root, dump))
    problems: list[Problem] = []
    for done, (file, check) in enumerate(checks, start=1):
        try:
            check()
        except ReadError as error:
            problems.append(Problem(error.file or file, error.reason))
        except Exception as error:  # a reader bug must not stop the check of the rest
            problems.append(Problem(file, f"cannot read: {type(error).__name__}: {error}"))
        if progress is not None:
            progress(done, len(checks))
    return problems


def _checks(root: Path, dump: Dump) -> Iterator[tuple[str, Check]]:
    # Files the listing already named as problems (a FIFO, a dangling link) are not opened.
    seen = {Source(problem.file) for problem in dump.problems}
    for module in dump.modules:
        for step in module.steps:
            sources = [(step.text, "text"), (step.proto, "proto")]
            for source, kind in sources:
                if source is None or source in seen:
                    continue
                seen.add(source)
                if step.ir == "hlo":
                    yield source.file, _bind(read_hlo_file, root, source, kind)
                else:
                    yield source.file, _bind(read_text, root, source)
        for execution in module.executions:
            source = Source(execution.file)
            if source in seen:
                continue
            seen.add(source)
            if execution.kind == "hlo-snapshot":
                yield source.file, _bind(read_snapshot_file, root, source)
            else:  # captures other tools replay: readable and not empty is what we can say
                yield source.file, _bind(_non_empty, root, source)


def _bind(function: Callable[..., object], *args: object) -> Check:
    return lambda: function(*args)


def _non_empty(root: Path, source: Source) -> None:
    if not read_bytes(root, source):
        raise ReadError(source.file, "empty file (still being written?)")

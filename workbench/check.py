"""`ls --check`: read every step and execution of a dump, and report what cannot be read.

Indexing looks at names only, so a damaged file shows up only when someone opens it. The check
opens everything once: each HLO step's text and proto (both, when both were dumped: a broken
text dump is worth knowing about even when the proto is fine), MLIR steps' text, and
snapshots. Every failure becomes a `Problem` (file and reason); nothing is raised, nothing is
cached (a check must not fill the cache the browser relies on), nothing is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.hlo_ir import HloModule
from workbench.loader import read_hlo_file, read_snapshot_file
from workbench.model import Dump, Problem, Source
from workbench.sources import ReadError, read_bytes, read_text

Check = Callable[[], object]


def check_dump(dump: Dump, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Problems found by reading every step and execution of `dump` (in file order)."""
    checks = list(_checks(dump.root, dump))
    problems: list[Problem] = []
    read: dict[str, object] = {}  # file -> what reading it gave (HLO steps only)
    for done, (file, check) in enumerate(checks, start=1):
        try:
            result = check()
            if isinstance(result, HloModule):  # compared with its step's other file
                read[file] = fingerprint(result)
        except ReadError as error:
            problems.append(Problem(error.file or file, error.reason))
        except Exception as error:  # a reader bug must not stop the check of the rest
            problems.append(Problem(file, f"cannot read: {type(error).__name__}: {error}"))
        if progress is not None:
            progress(done, len(checks))
    problems.extend(_disagreements(dump, read))
    return problems


def fingerprint(module: HloModule) -> dict[str, Counter[str]]:
    """What the text and the proto of one step must agree on, cheap to compare: how many
    instructions of each opcode every computation holds (the two list instructions in
    different orders). Newer XLA prints a get-tuple-element only as its use
    (`%custom-call#1`), so get-tuple-elements count once per tuple element used: one without
    users (a TopK's values when only its indices are used, until DCE) is in the proto and not
    in the text, and two of the same element (a threefry loop's body reading its counter
    twice, until CSE) are one in the text."""
    fingerprints = {}
    for computation in module.computations:
        used = {operand for i in computation.instructions for operand in i.operands}
        used.add(computation.root_name)
        counts = Counter(i.opcode for i in computation.instructions
                         if i.opcode != "get-tuple-element")
        elements = {(tuple(i.operands), i.tuple_index) for i in computation.instructions
                    if i.opcode == "get-tuple-element" and i.name in used}
        if elements:
            counts["get-tuple-element"] = len(elements)
        fingerprints[computation.name] = counts
    return fingerprints


def _disagreements(dump: Dump, fingerprints: dict[str, object]) -> Iterator[Problem]:
    """A problem for each step whose text and proto both read but hold different programs:
    the app and `diff` show the text, the replay judges the proto."""
    for module in dump.modules:
        for step in module.steps:
            if step.text is None or step.proto is None:
                continue
            text = fingerprints.get(step.text.file)
            proto = fingerprints.get(step.proto.file)
            if not isinstance(text, dict) or not isinstance(proto, dict) or text == proto:
                continue
            yield Problem(step.text.file, f"disagrees with {step.proto.file}: "
                                          f"{_difference(text, proto)} (the replay judges "
                                          "the proto)")


def _difference(text: dict[str, Counter[str]], proto: dict[str, Counter[str]]) -> str:
    if text.keys() != proto.keys():
        only = sorted(text.keys() ^ proto.keys())[0]
        return f"computation {only} is only in the {'text' if only in text else 'proto'}"
    name = next(name for name in sorted(text) if text[name] != proto[name])
    counts = ", ".join(f"{opcode} {text[name][opcode]} against {proto[name][opcode]}"
                       for opcode in sorted(text[name].keys() | proto[name].keys())
                       if text[name][opcode] != proto[name][opcode])
    return f"in computation {name}, instructions in the text against the proto: {counts}"


def _checks(root: Path, dump: Dump) -> Iterator[tuple[str, Check]]:
    # Files the listing already named as problems (a FIFO, a dangling link) are not opened.
    seen = {Source(problem.file) for problem in dump.problems if problem.unreadable}
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
                yield source.file, _bind(_read_whole_snapshot, root, source)
            else:  # captures other tools replay: readable and not empty is what we can say
                yield source.file, _bind(_non_empty, root, source)


def _bind(function: Callable[..., object], *args: object) -> Check:
    return lambda: function(*args)


def _read_whole_snapshot(root: Path, source: Source) -> None:
    """Read a snapshot and make the module it carries (made on first use otherwise)."""
    read_snapshot_file(root, source).module  # noqa: B018


def _non_empty(root: Path, source: Source) -> None:
    if not read_bytes(root, source):
        raise ReadError(source.file, "empty file (still being written?)")

"""Assemble XLA dump files into modules, from names only (no file is opened).

A module's timeline: `module.mlir` (the StableHLO JAX handed to XLA, when the PJRT folder is
there), `before_optimizations`, the per-pass steps in XLA step order, then
`<platform>_after_optimizations`. Shardy's stage dumps (`shardy/<module>/NN.<stage>.mlir`:
its input, before and after propagation, after the partitioner, its output) are MLIR steps
of the module, placed where the `shardy-xla` pass ran: before the step after that pass, or
after `before_optimizations` when no per-pass step shows it.

Modules are grouped by (folder, timestamp prefix, module id): the same `module_0000` in two
sub-folders, or from two timestamped runs, are different modules.

Speed matters here (a 100,000-file folder must index in about the time `find` lists it):
per-pass step files, three quarters of a typical dump, come in text/proto pairs; a module's
names come one after the other in a sorted listing, and after its head is split once, each
is told by its suffix (`<step>.<pipeline>.after_<pass>...`), read once for all modules (they
run the same passes), so no name is split per file. A pair is kept as a compact record (its
key and its two paths); the module's `Step`s are made from the records when its steps are
first read (`Module.defer_steps`). The paths may come in any order: where two names compete
for one place, the outcome is the one a sorted listing gives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter, itemgetter
from typing import Literal

from workbench.formats.xla_names import (
    MODULE_FOLDER_FILES,
    MODULE_RE,
    SHARDY_FOLDER,
    SHARDY_STAGE_RE,
    parse_xla_name,
    read_plain_name,
    split_module_prefix,
    split_pass_stem,
    split_pass_suffix,
    split_plain_name,
)
from workbench.model import Artifact, Dump, Execution, Module, Problem, Source, Step

# Timeline order: input, before_optimizations, per-pass steps, after_optimizations.
_INPUT, _BEFORE, _PASS, _AFTER = 0, 1, 2, 3
# Per-pass steps are ordered by (xla_step, pipeline, pass_name, next_pass or ""): keys that
# start with an int sort fast (list.sort compares those first elements natively).
_BY_KEY = itemgetter(0)
_BY_FILE = attrgetter("file")
# The extensions of a per-pass pair: text and proto.
_PAIR_EXTENSIONS = (".txt", ".hlo.pb")


class _Unseen(Enum):
    """A memo's "not looked up yet", apart from its remembered None."""

    UNSEEN = 0


_UNSEEN = _Unseen.UNSEEN


@dataclass
class _PendingModule:
    folder: str
    timestamp: str | None
    module_id: str
    names: set[str] = field(default_factory=set)
    # (_INPUT,), (_BEFORE,) or (_AFTER, platform) -> step
    ends: dict[tuple, Step] = field(default_factory=dict)
    # per-pass order key -> step, from names `parse_xla_name` took (`.txt.gz` and the like)
    passes: dict[tuple, Step] = field(default_factory=dict)
    # per-pass order key -> [text path, proto path] (None where absent), from the pairs
    pairs: dict[tuple, list] = field(default_factory=dict)
    # pairs whose key another pair holds already (one module id under two module names)
    pairs_again: list[tuple[tuple, list]] = field(default_factory=list)
    # every step file, in the order claimed: what the steps are made from
    step_files: list[str] = field(default_factory=list)
    executions: list[Execution] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    kernel_files: list[tuple[str, str, str]] = field(default_factory=list)
    # Shardy's stage dumps: (stage number, stage name, path)
    shardy_stages: list[tuple[int, str, str]] = field(default_factory=list)


def _pass_key(step: Step) -> tuple:
    return (step.xla_step, step.pipeline, step.pass_name, step.next_pass or "")


def _keep_last(step: Step, role: Literal["text", "proto"], path: str) -> None:
    """Make `path` the step's text or proto unless a name that sorts after it is there: when
    two files name the same step (`.txt` and `.txt.gz`), the last in a sorted listing wins."""
    known = step.text if role == "text" else step.proto
    if known is None or path > known.file:
        if role == "text":
            step.text = Source(path)
        else:
            step.proto = Source(path)


def _fill_gaps(step: Step, other: Step) -> None:
    step.text = step.text or other.text
    step.proto = step.proto or other.proto


def _pair_step(key: tuple, files: list) -> Step:
    """The step of a per-pass pair record: `key` as `_pass_key`, `files` [text, proto]."""
    xla_step, pipeline, pass_name, next_pass = key
    text, proto = files
    return Step(0, pass_name, "hlo", "pass", None if text is None else Source(text),
                None if proto is None else Source(proto), pipeline, next_pass or None, xla_step)


def _first_file(record: tuple[tuple, list]) -> str:
    """The name a sorted listing shows first of a per-pass pair (`.hlo.pb` sorts before
    `.txt`)."""
    text, proto = record[1]
    return proto or text


def claim_xla(dump: Dump, paths: list[str]) -> list[str]:
    """Add the XLA modules found among `paths` (in any order) to `dump`; return the paths not
    claimed, sorted (the claimers after this one want them so, and in an XLA dump they are
    few).

    Modules are told apart by number and name: two processes writing one folder can both dump
    a `module_0001` (`jit_f` and `jit_g`). Such a collision is rare, so the files are grouped
    by number first, and only a group with two names is claimed again by name; it is named
    as a problem, and its modules get keys that hold their names (see `index`).
    """
    pending, unclaimed = _collect(paths, by_name=False)
    for module in pending.values():
        names = sorted(module.names - {""})
        if len(names) < 2:
            _add(dump, module)
            continue
        head = _module_head(module)
        dump.problems.append(Problem(head, f"{len(names)} modules share the number "
                                           f"{module.module_id}: {', '.join(names)} (two runs "
                                           "writing one folder?); they are listed apart"))
        for part in _split_by_name(module):
            _add(dump, part)
    return sorted(unclaimed)


def _add(dump: Dump, module: _PendingModule) -> None:
    """The module to `dump`, and a gap in its per-pass numbering to its problems."""
    dump.modules.append(_finish(module))
    gap = _missing_steps(module)
    if gap is not None:
        dump.problems.append(gap)


def _module_head(module: _PendingModule) -> str:
    """`[<folder>/][<timestamp>.]module_<NNNN>`: where the module's files are, and what."""
    head = f"{module.timestamp}.{module.module_id}" if module.timestamp else module.module_id
    return f"{module.folder}/{head}" if module.folder else head


def _module_files(module: _PendingModule) -> list[str]:
    return [*module.step_files, *(e.file for e in module.executions),
            *(a.file for a in module.artifacts), *(path for path, _, _ in module.kernel_files)]


def _split_by_name(module: _PendingModule) -> list[_PendingModule]:
    """The modules of one number's files, one per module name; kernel files go to the module
    whose name starts theirs, files with no name to a module of their own."""
    parts, _ = _collect(_module_files(module), by_name=True)
    unnamed = parts.pop((module.folder, module.timestamp, module.module_id, ""), None)
    if unnamed is not None:
        by_name = {min(part.names - {""}): part for part in parts.values()}
        kernels, unnamed.kernel_files = unnamed.kernel_files, []
        for path, role, rest in kernels:
            name = split_module_prefix(rest, set(by_name))
            (by_name[name] if name else unnamed).kernel_files.append((path, role, rest))
        if _module_files(unnamed):
            parts[(module.folder, module.timestamp, module.module_id, "")] = unnamed
    return list(parts.values())


def _collect(paths: list[str], *, by_name: bool
             ) -> tuple[dict[tuple, _PendingModule], list[str]]:
    """The pending modules of `paths` by (folder, timestamp, module id[, module name]), and
    the paths not claimed."""
    pending: dict[tuple, _PendingModule] = {}
    unclaimed: list[str] = []

    def module_for(folder: str, timestamp: str | None, module_id: str,
                   name: str | None) -> _PendingModule:
        key = (folder, timestamp, module_id, name or "") if by_name else \
            (folder, timestamp, module_id)
        module = pending.get(key)
        if module is None:
            module = pending[key] = _PendingModule(folder, timestamp, module_id)
        return module

    # (folder, module head) -> its module and its per-pass pair records by suffix (the name
    # after `<head>.`, without its extension), or None when the head is not an XLA module name.
    heads: dict[tuple[str, str], tuple[_PendingModule, dict[str, list]] | None] = {}
    # The head of the last per-pass name split, as `<folder>/<head>.`, with its module and
    # records, when the names after it say their order key by their suffix alone (see
    # `split_pass_suffix`): the names of a module come one after the other in a sorted
    # listing, and are then paired without splitting them. No path starts with a NUL.
    head_prefix = "\0"
    head_module = _PendingModule("", None, "")
    head_records: dict[str, list] = {}

    def new_record(module: _PendingModule, records: dict[str, list], suffix: str,
                   key: tuple) -> list:
        """A pair record ([text, proto]) for the per-pass step `key` of `module`."""
        files = records[suffix] = [None, None]
        if module.pairs.setdefault(key, files) is not files:
            module.pairs_again.append((key, files))
        return files

    def split_record(stem_path: str) -> tuple[list, list] | None:
        """The pair record of a per-pass dump whose path without extension is `stem_path`,
        and its module's step files, from the name split whole; None for other names."""
        nonlocal head_prefix, head_module, head_records
        folder, _, stem = stem_path.rpartition("/")
        if ".after_" not in stem:
            return None
        parts = split_pass_stem(stem)
        if parts is None:
            return None
        module_head, xla_step, pipeline, pass_name, next_pass = parts
        head = heads.get((folder, module_head), _UNSEEN)
        if head is _UNSEEN:
            match = MODULE_RE.fullmatch(module_head)
            if match is None:
                head = heads[(folder, module_head)] = None
            else:
                module = module_for(folder, match["ts"], f"module_{match['num']}",
                                    match["rest"])
                module.names.add(match["rest"] or "")
                head = heads[(folder, module_head)] = (module, {})
        if head is None:
            return None
        module, records = head
        suffix = stem[len(module_head) + 1 :]
        files = records.get(suffix)
        if files is None:
            files = new_record(module, records, suffix,
                               (xla_step, pipeline, pass_name, next_pass or ""))
        if ".after_" not in module_head and "\n" not in module_head:
            head_prefix = stem_path[: len(stem_path) - len(suffix)]
            head_module, head_records = module, records
        return files, module.step_files

    # The module head of the last other name read whole, as `<folder>/[<timestamp>.]module_<NNNN>
    # .<name>.` when its name is plain (`split_plain_name`), with its timestamp, name and
    # module: the names after it are read by their tail alone (`read_plain_name`). Not when
    # claiming by name (a module's names may then differ in the tail). Shardy's stage dumps,
    # `.mlir` names, are read whole: a timestamped head could be taken for a stage's number.
    plain_prefix = "\0"
    plain_timestamp: str | None = None
    plain_name = ""
    plain_module = head_module

    for path in paths:
        if ".after_" in path and path.endswith(_PAIR_EXTENSIONS):
            text = path[-1] == "t"  # .txt, not .hlo.pb
            files = None
            if path.startswith(head_prefix):
                suffix = path[len(head_prefix) : -4 if text else -7]
                files = head_records.get(suffix)
                if files is None:
                    pass_key = split_pass_suffix(suffix)
                    if pass_key is not None:
                        files = new_record(head_module, head_records, suffix, pass_key)
            if files is not None:
                files[not text] = path
                head_module.step_files.append(path)
                continue
            record = split_record(path[:-4] if text else path[:-7])
            if record is not None:
                record[0][not text] = path
                record[1].append(path)
                continue

        info = None
        if path.startswith(plain_prefix) and not path.endswith(".mlir"):
            tail = path[len(plain_prefix) :]
            if "/" not in tail and "\n" not in tail:
                info = read_plain_name(plain_timestamp, plain_module.module_id, plain_name, tail)
        if info is not None:
            if info.kind == "unknown":
                unclaimed.append(path)
                continue
            module = plain_module
        else:
            folder, _, basename = path.rpartition("/")
            if basename in MODULE_FOLDER_FILES:
                parent_folder, _, parent = folder.rpartition("/")
                head = MODULE_RE.match(parent)
                if head is not None:
                    module = module_for(parent_folder, head["ts"], f"module_{head['num']}",
                                        head["rest"])
                    if head["rest"]:
                        module.names.add(head["rest"])
                    role = MODULE_FOLDER_FILES[basename]
                    if role == "input":
                        step = module.ends.get((_INPUT,))
                        if step is None:
                            step = module.ends[(_INPUT,)] = Step(0, "input", "mlir", "input")
                        _keep_last(step, "text", path)
                        module.step_files.append(path)
                    else:
                        module.artifacts.append(Artifact(kind=role, file=path))
                    continue

            stage = SHARDY_STAGE_RE.fullmatch(basename)
            if stage is not None:
                shardy_folder, _, head_name = folder.rpartition("/")
                head = MODULE_RE.match(head_name)
                dump_folder, _, shardy = shardy_folder.rpartition("/")
                if head is not None and shardy == SHARDY_FOLDER:
                    module = module_for(dump_folder, head["ts"], f"module_{head['num']}",
                                        head["rest"])
                    if head["rest"]:
                        module.names.add(head["rest"])
                    module.shardy_stages.append((int(stage["number"]), stage["stage"], path))
                    module.step_files.append(path)
                    continue

            info = parse_xla_name(basename)
            if info is None or info.kind == "unknown":
                unclaimed.append(path)
                continue
            module = module_for(folder, info.timestamp, info.module_id, info.name)
            split = None if by_name else split_plain_name(basename)
            if split is not None:
                plain_timestamp, _, plain_name, tail = split
                plain_prefix, plain_module = path[: len(path) - len(tail)], module
        if info.name is not None:
            module.names.add(info.name)
        kind = info.kind
        if kind == "artifact":
            module.artifacts.append(Artifact(kind=info.role, file=path))
        elif kind in ("before", "after"):
            if kind == "before":
                end_key: tuple = (_BEFORE,)
                label = "before_optimizations"
            else:
                prefix = f"{info.platform}_" if info.platform else ""
                end_key, label = (_AFTER, info.platform or ""), f"{prefix}after_optimizations"
            step = module.ends.get(end_key)
            if step is None:
                step = module.ends[end_key] = Step(0, label, "hlo", kind, pipeline=info.platform)
            _keep_last(step, "text" if info.role == "text" else "proto", path)
            module.step_files.append(path)
        elif kind == "snapshot":
            module.executions.append(Execution(id=info.execution or "", file=path))
        elif kind == "step":  # per-pass names the fast path did not take (.gz, renderings)
            if info.role in ("text", "proto"):
                key = (info.xla_step, info.pipeline, info.pass_name, info.next_pass or "")
                step = module.passes.get(key)
                if step is None:
                    step = module.passes[key] = Step(
                        0, info.pass_name or "", "hlo", "pass", pipeline=info.pipeline,
                        next_pass=info.next_pass, xla_step=info.xla_step)
                _keep_last(step, "text" if info.role == "text" else "proto", path)
                module.step_files.append(path)
            else:
                module.artifacts.append(Artifact(kind=info.role, file=path,
                                                 label=f"{info.xla_step:04d} {info.pass_name}"))
        elif kind == "mlir-trace":
            module.artifacts.append(Artifact(kind="mlir-trace", file=path))
        else:  # kernel artifacts: the kernel name is split off once all names are known
            module.kernel_files.append((path, info.role, info.rest))

    return pending, unclaimed


def _missing_steps(module: _PendingModule) -> Problem | None:
    """A gap in a module's per-pass numbering: XLA numbers the steps it dumps from 0000 on
    without a gap (`--xla_dump_hlo_pass_re` narrows what is numbered), so a number missing
    is a step whose file was not written (TensorFlow's "File name too long") or was removed."""
    numbers = {key[0] for key in module.pairs} | {key[0] for key in module.passes}
    if not numbers:
        return None
    missing = sorted(set(range(max(numbers))) - numbers)
    if not missing:
        return None
    runs: list[list[int]] = []
    for number in missing:
        if runs and runs[-1][1] == number - 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    spans = ", ".join(f"{a:04d}" if a == b else f"{a:04d}-{b:04d}" for a, b in runs)
    head = "/".join(filter(None, (module.folder, ".".join(filter(None, (
        module.timestamp, module.module_id, _own_name(module.names)))))))
    count = len(missing)
    return Problem(head, f"per-pass step{'s' if count > 1 else ''} {spans} of {max(numbers) + 1} "
                         f"{'are' if count > 1 else 'is'} missing (not written, or removed)")


def _own_name(names: set[str]) -> str:
    """The module's own name among those its files give (see `_finish`)."""
    names = names - {""}
    return min(names, key=lambda n: (len(n), n)) if names else ""


def _passes(module: _PendingModule) -> list[Step]:
    """The per-pass steps in order: the pair records merged into the steps other names made,
    as a sorted listing would have them.

    A step some other file names too (`.txt.gz`, found by `parse_xla_name`) keeps that file
    and takes from the pair only what it lacks. Pairs that name the same step (one module id
    under two module names) merge in the order of their first file: the earlier's files
    first, the later's filling the gaps. Most modules have pairs alone: their steps are made
    in order, with nothing to merge.
    """
    if not module.passes and not module.pairs_again:
        return [_pair_step(key, files) for key, files in sorted(module.pairs.items(),
                                                                 key=_BY_KEY)]
    records: Iterable[tuple[tuple, list]] = module.pairs.items()
    if module.pairs_again:
        records = sorted([*records, *module.pairs_again], key=_first_file)
    passes = dict(module.passes)
    for key, files in records:
        step = _pair_step(key, files)
        known = passes.setdefault(key, step)
        if known is not step:
            _fill_gaps(known, step)
    return [step for _, step in sorted(passes.items(), key=_BY_KEY)]


def _finish(pending: _PendingModule) -> Module:
    for path, role, rest in pending.kernel_files:
        name = split_module_prefix(rest, pending.names)
        label = rest[len(name) + 1 :] if name else rest
        pending.artifacts.append(Artifact(kind=role, file=path, label=label))
    # Several names under one id happen only when runs share a folder without timestamps;
    # the shortest is the module's own name.
    name = _own_name(pending.names)
    key = pending.module_id
    if pending.timestamp:
        key = f"{pending.timestamp}.{key}"
    if pending.folder:
        key = f"{pending.folder}/{key}"
    module = Module(id=pending.module_id, name=name, format="xla", key=key)

    def make_steps() -> list[Step]:
        ends = sorted(pending.ends.items())
        steps = [step for order, step in ends if order[0] < _PASS]
        passes = _passes(pending)
        if pending.shardy_stages:
            shardy = next((at for at, step in enumerate(passes)
                           if step.pass_name == "shardy-xla"), 0)
            passes[shardy:shardy] = [
                Step(0, name, "mlir", "stage", Source(path), pipeline="shardy")
                for _, name, path in sorted(pending.shardy_stages)]
        steps += passes
        steps += [step for order, step in ends if order[0] > _PASS]
        for index, step in enumerate(steps):
            step.index = index
        return steps

    per_pass = len(pending.pairs) if not pending.passes else \
        len(pending.passes.keys() | pending.pairs.keys())
    count = len(pending.ends) + per_pass + len(pending.shardy_stages)
    module.defer_steps(make_steps, count, per_pass,
                       tuple(pending.step_files))
    module.executions = sorted(pending.executions, key=_BY_FILE)
    module.artifacts = sorted(pending.artifacts, key=_BY_FILE)
    return module

"""Scan a dump folder into the model.

Two phases. *Claiming* looks at names only: each format's claimer takes the paths it
recognizes and builds modules from them; what nobody claims is listed as "other". *Expanding*
opens the container files some formats need to count their steps (an mlir-trace proto, a
print-ir log); it reads those files only, and is skipped by `scan(..., expand=False)`.

The scan never writes into the folder and never raises for a bad file: unreadable folders and
files become `Problem`s.

Only the XLA claimer is imported with this module: the others, and the expanders, are imported
when a folder holds something for them, so listing an XLA dump imports no protobuf, numpy or
subprocess machinery.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from workbench.formats.dump_formats import EXPANSIONS, FORMATS
from workbench.formats.xla_names import parse_xla_name
from workbench.gc_pause import gc_paused
from workbench.model import Dump, Module, Problem
from workbench.sources import (
    DANGLING_LINK,
    ReadError,
    link_outside,
    not_regular,
    not_regular_reason,
    outside_reason,
)

PROGRESS_EVERY = 4096  # files listed between two `list_files` progress calls


def list_files(
    root: Path, problems: list[Problem], progress: Callable[[list[str]], None] | None = None
) -> list[str]:
    """Every file under `root`, as sorted POSIX paths relative to it: the regular files, and
    the entries that are problems (each also added to `problems`, see `classify_entry`), so
    that a step named by one stays in its module's timeline as a step that cannot be read.

    Sorted although `claim_paths` takes any order: claiming a module's files one after the
    other keeps its objects together in memory, which saves more than the sort costs.

    Uses `os.scandir` so the directory entry types come with the listing (no `stat` per plain
    file or folder, as `find -type f` does); anything else is classified by `classify_entry`.
    `progress`, when given, is called every few thousand files and after each folder with the
    (unsorted) paths found so far, so a live view can show modules while a large folder is
    still being listed.
    """
    found: list[str] = []
    stack = [""]
    while stack:
        relative = stack.pop()
        directory = os.path.join(root, relative) if relative else os.fspath(root)
        prefix = f"{relative}/" if relative else ""
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        # Plain files first: they are most entries, and one test settles them
                        # (free: the listing says so). Neither test takes a link.
                        if entry.is_file(follow_symlinks=False):
                            found.append(prefix + entry.name)
                            if progress is not None and len(found) % PROGRESS_EVERY == 0:
                                progress(found)
                            continue
                        if entry.is_dir(follow_symlinks=False) and \
                                not named_like_dump_file(entry.name):
                            stack.append(prefix + entry.name)
                            continue
                    except OSError as error:
                        problems.append(Problem(prefix + entry.name,
                                                f"cannot stat: {error.strerror}"))
                        continue
                    path = prefix + entry.name
                    how, reason = classify_entry(root, path)
                    if how == "folder":
                        stack.append(path)
                    elif how != "skip":
                        found.append(path)
                        if reason is not None:
                            problems.append(Problem(path, reason, unreadable=True))
        except OSError as error:
            problems.append(Problem(relative or ".", f"cannot list folder: {error.strerror}"))
        if progress is not None:
            progress(found)
    found.sort()
    return found


EntryKind = Literal["file", "folder", "skip", "problem"]


def named_like_dump_file(name: str) -> bool:
    """Whether a folder's name is that of a file XLA dumps (a step, a snapshot): such a folder
    stands where a file of the module should be."""
    info = parse_xla_name(name)
    return info is not None and info.kind != "unknown"


def classify_entry(root: Path | str, path: str) -> tuple[EntryKind, str | None]:
    """How the listing takes the entry `path` (relative to `root`), and the problem's reason.

    "file": a regular file (or a link to one inside the dump). "folder": a folder to list.
    "skip": gone, or a link to a folder (not followed: links can loop). "problem": listed, and
    a problem that says why it is never read: a link out of the dump, a dangling link, a FIFO,
    a socket, a device, a folder named like a dump file. The live watch classifies what it
    is told about the same way.
    """
    full = os.path.join(root, path)
    try:
        mode = os.lstat(full).st_mode
        if stat.S_ISLNK(mode):
            outside = link_outside(root, path)
            if outside is not None:
                return "problem", outside_reason(outside)
            try:
                mode = os.stat(full).st_mode
            except FileNotFoundError:
                return "problem", DANGLING_LINK
            if stat.S_ISDIR(mode):
                return "skip", None
    except FileNotFoundError:
        return "skip", None
    except OSError as error:
        return "problem", f"cannot stat: {error.strerror}"
    if stat.S_ISDIR(mode):
        if named_like_dump_file(path.rpartition("/")[2]):
            return "problem", not_regular_reason("a folder")
        return "folder", None
    kind = not_regular(mode)
    return ("file", None) if kind is None else ("problem", not_regular_reason(kind))


def scan(target: Path | str, *, expand: bool = True) -> Dump:
    """Index a dump folder, or a single file (then its folder is the root)."""
    target = Path(target)
    if target.is_file():
        dump = Dump(root=target.parent)
        paths = [target.name]
    else:
        dump = Dump(root=target)
        if not target.exists():
            dump.problems.append(Problem(".", f"no such folder: {target}"))
            return dump
        paths = list_files(target, dump.problems)
    return claim_paths(dump, paths, expand=expand)


def claim_paths(dump: Dump, paths: list[str], *, expand: bool = True) -> Dump:
    """Fill `dump` from an already-made listing of its files (relative POSIX paths, in any
    order).

    `scan` lists then claims; the live watch keeps its own listing up to date and claims again
    after each batch of changes, without listing the folder again.
    """
    # Entries the listing found unreadable (FIFOs, links out of the dump...): the XLA claimer
    # places them by name alone, so a step named by one stays in its timeline and fails when
    # read; the other claimers would open them to sniff their format, so they never see them,
    # and nothing made of them alone is listed.
    unreadable = {problem.file for problem in dump.problems if problem.unreadable}
    # Claiming allocates several objects per file, none of them in a cycle.
    with gc_paused():
        for known in FORMATS:
            if known.may_claim(paths):
                paths = known.claimer()(dump, paths)
            if unreadable and known.reads_names_only:
                paths = [path for path in paths if path not in unreadable]
    if unreadable:
        dump.modules = [m for m in dump.modules if not m.files() <= unreadable]
    if any(path.endswith(".npy") for path in paths):  # a recording of calls beside the dump
        from workbench.formats.recording import claim_recordings

        paths = claim_recordings(dump, paths)
    dump.others.extend(paths)
    if expand:
        for expansion in EXPANSIONS:
            if any(expansion.expands(module) for module in dump.modules):
                expansion.run(dump)
    _make_keys_unique(dump)
    dump.modules.sort(key=lambda m: (m.key, m.name))
    return dump


def _make_keys_unique(dump: Dump) -> None:
    counts = Counter(module.key for module in dump.modules)
    for module in dump.modules:
        if counts[module.key] > 1 and module.name:
            module.key = f"{module.key}.{module.name}"




def file_module(path: Path | str) -> Module:
    """The one module a dump file holds (an mlir-trace, a print-ir log, a crash reproducer),
    read as `scan` reads it in its folder. Raises ReadError when the file cannot be read or
    holds no single module."""
    path = Path(path)
    if not path.is_file():
        raise ReadError(path.name, "file not found" if not path.exists() else "not a file")
    dump = scan(path)
    if dump.problems:
        raise ReadError(dump.problems[0].file, dump.problems[0].reason)
    if len(dump.modules) != 1:
        raise ReadError(path.name, f"holds {len(dump.modules) or 'no'} modules, not one")
    return dump.modules[0]

"""How a reader following a triage through the code moves between files.

A real `triage` of a dump (the shipped example by default) runs in this process (`jobs=0`,
no cache) with a profile hook that notes each function of `workbench/` the first time it is
entered, from `replay/triage/run.py:triage` down (functions only: no module or class
bodies, nor what they call on import; comprehensions and lambdas are read with their
function). In that order (the order
a reader meets the code reading the run top to bottom, each function once), consecutive
functions of one file make one *stay*; a stay in a file already left is a *return*. Fewer
returns: a path read in fewer jumps back and forth.

Run as a script: `python tests/helpers/triage_path.py [DUMP] [--stays]` prints the stays,
the files and the returns (and with `--stays`, each stay with its functions).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from inspect import CO_OPTIMIZED
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
# Code a reader does not enter on its own: the comprehensions and lambdas are read with the
# function around them (module and class bodies, run on import, are no functions either).
NOT_READ = frozenset(("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"))


@dataclass(frozen=True)
class Stay:
    file: str  # relative to `workbench/`
    functions: tuple[str, ...]


def first_entries(dump_folder: Path) -> list[tuple[str, str]]:
    """(file under `workbench/`, function) of each function the triage enters, in the order
    of their first entry."""
    from workbench.index import scan
    from workbench.replay.triage.run import triage

    dump = scan(dump_folder)
    seen: set[Any] = set()
    order: list[tuple[str, str]] = []
    package = str(PACKAGE) + "/"

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if (code in seen or not code.co_flags & CO_OPTIMIZED or code.co_name in NOT_READ
                or not code.co_filename.startswith(package) or _importing(frame)):
            return
        seen.add(code)
        order.append((code.co_filename[len(package):], code.co_qualname))

    sys.setprofile(profile)
    try:
        triage(dump, jobs=0)
    finally:
        sys.setprofile(None)
    return order


def _importing(frame: FrameType) -> bool:
    """Whether `frame` runs for an import (a module body is on the stack): registrations and
    module-level objects, not the path."""
    caller: FrameType | None = frame.f_back
    while caller is not None:
        if caller.f_code.co_name == "<module>" and caller.f_code.co_filename != __file__:
            return True
        caller = caller.f_back
    return False


def stays(entries: list[tuple[str, str]]) -> list[Stay]:
    """The entries cut where the file changes."""
    found: list[Stay] = []
    for file, function in entries:
        if found and found[-1].file == file:
            found[-1] = Stay(file, (*found[-1].functions, function))
        else:
            found.append(Stay(file, (function,)))
    return found


def returns(path: list[Stay]) -> int:
    """Stays in a file the path had already left."""
    return len(path) - len({stay.file for stay in path})


def main(argv: list[str]) -> None:
    folders = [Path(a) for a in argv if not a.startswith("--")]
    path = stays(first_entries(folders[0] if folders else EXAMPLE))
    if "--stays" in argv:
        for stay in path:
            print(f"{stay.file}: {', '.join(stay.functions)}")
    files = len({stay.file for stay in path})
    print(f"{len(path)} stays in {files} files, {returns(path)} returns to a file already left")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])

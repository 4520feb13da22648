"""Opening what the app shows in the user's own tools: `$PAGER` and `$EDITOR`, and a folder
the app wrote (`W`'s reproducer) in a second workbench.

The app is suspended while the tool runs (the terminal is the tool's) and redrawn after. A
pager or editor always gets a read-only copy in a temporary folder, removed when it returns,
so nothing it does reaches the dump folder.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from textual.app import App, SuspendNotSupported

READ_ONLY_FLAG = {"vi": "-R", "vim": "-R", "nvim": "-R", "gvim": "-R", "nano": "-v"}


def tool_command(variable: str, default: str) -> list[str]:
    """The command in `$variable` (split as a shell would; a pager may carry options), or
    `default` when it is unset or blank."""
    value = os.environ.get(variable, "").strip()
    try:
        words = shlex.split(value) if value else []
    except ValueError:  # an unbalanced quote: take it as one program name
        words = [value]
    return words or [default]


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi; told to open read-only when it is one that can be."""
    variable = "VISUAL" if os.environ.get("VISUAL", "").strip() else "EDITOR"
    command = tool_command(variable, "vi")
    flag = READ_ONLY_FLAG.get(Path(command[0]).name)
    return [*command, flag] if flag and flag not in command else command


def safe_file_name(name: str) -> str:
    """`name` with every character a shell or a file system may mind replaced by `_`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "ir"


def open_outside(app: App, command: list[str], name: str, text: str) -> None:
    """Write `text` to a read-only temporary file named `name`, run `command` on it with the
    app suspended, then remove the file. Problems become notifications."""
    folder = Path(tempfile.mkdtemp(prefix="workbench-"))
    try:
        path = folder / safe_file_name(name)
        path.write_text(text, encoding="utf-8")
        path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        run_suspended(app, [*command, str(path)])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def workbench_command() -> list[str]:
    """The workbench app as a command (this interpreter, so the same installation)."""
    return [sys.executable, "-m", "workbench"]


def open_in_workbench(app: App, folder: Path) -> None:
    """Open `folder` (a reproducer the app wrote) in a second workbench in this terminal,
    with this one suspended until that one quits."""
    run_suspended(app, [*workbench_command(), str(folder)])


def run_suspended(app: App, command: list[str]) -> None:
    """Run `command` in the terminal with the app suspended; problems become notifications."""
    failure = ""
    try:
        with app.suspend():  # not left by an exception: Textual would not resume then
            try:
                status = subprocess.run(command, check=False).returncode
            except OSError as error:
                failure = f"cannot run {command[0]}: {error.strerror or error}"
    except SuspendNotSupported:
        failure = "this terminal cannot hand itself to another program"
    if not failure and status != 0:
        failure = f"{command[0]} ended with status {status}"
    if failure:
        app.notify(failure, timeout=6)

"""`workbench ls` on a terminal fits its width without cutting the module key, and into a pipe
keeps every cell whole: run on a real pseudo-terminal of a given size."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from workbench.index import scan

# A TensorFlow-named module (JAX, `--xla_dump_emitter_re`): its name alone is 126 characters.
TENSORFLOW_DUMP = Path(__file__).parent.parent / "data" / "producers" / "long_name_emitters"
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def ls_on_terminal(folder: Path, columns: int, lines: int) -> list[str]:
    """The lines `workbench ls FOLDER` shows on a terminal COLUMNSxLINES, styling removed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    process = subprocess.Popen([sys.executable, "-m", "workbench", "ls", str(folder)],
                               stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert process.wait() == 0, output
    return [ESCAPE.sub("", line).rstrip() for line in output.decode().splitlines()]


@pytest.mark.parametrize(("columns", "lines", "framed"),
                         [(80, 24, True), (200, 60, True), (80, 5, False), (70, 24, False)])
def test_ls_fits_the_terminal_and_keeps_the_module_key(columns: int, lines: int,
                                                       framed: bool) -> None:
    shown = ls_on_terminal(TENSORFLOW_DUMP, columns, lines)
    assert max(len(line) for line in shown) <= columns, "\n".join(shown)
    assert any("┃ module" in line for line in shown) == framed, "\n".join(shown)
    [module] = scan(TENSORFLOW_DUMP).modules
    [row] = [line.replace("│", " ").split() for line in shown if module.key in line]
    assert row[0] == module.key and row[-5:] == ["xla", "16", "13", "1", "6"]


def test_ls_into_a_pipe_keeps_whole_columns() -> None:
    done = subprocess.run([sys.executable, "-m", "workbench", "ls", str(TENSORFLOW_DUMP)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "80"})
    [module] = scan(TENSORFLOW_DUMP).modules
    row = done.stdout.splitlines()[2]
    assert row.split()[:2] == [module.key, "jit_a_inference_tra…154034397263"]
    assert len(row) > 80

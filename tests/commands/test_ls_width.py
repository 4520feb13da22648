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

from workbench.commands import ls
from workbench.index import scan
from workbench.model import Dump, Module

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
    assert all(line[-1] in "┓┃┩│┘" for line in shown if line[:1] in "┏┃┡│└")  # uncut frame
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


def long_keys() -> Dump:
    """Two modules whose ids collide: their keys carry their names (`_make_keys_unique`)."""
    [module] = scan(TENSORFLOW_DUMP).modules
    return Dump(root=TENSORFLOW_DUMP, modules=[
        Module(id=module.id, name=module.name, format="xla", key=f"{module.id}.{module.name}"),
        Module(id=module.id, name="jit_f", format="xla", key=f"{module.id}.jit_f")])


@pytest.mark.parametrize("terminal", [None, (80, 24), (200, 60)])
def test_a_long_module_key_is_whole(terminal: tuple[int, int] | None,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Into a pipe on one line; on a terminal within its width, folded over lines if need be."""
    dump = long_keys()
    if terminal is not None:
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
        monkeypatch.setattr(ls.shutil, "get_terminal_size",
                            lambda: os.terminal_size(terminal))
        monkeypatch.setenv("COLUMNS", str(terminal[0]))
    assert ls._list(dump, as_json=False) == 0
    shown = [ESCAPE.sub("", line) for line in capsys.readouterr().out.splitlines()]
    if terminal is None:
        assert [line.split()[0] for line in shown[2:4]] == [m.key for m in dump.modules]
        return
    assert max(len(line) for line in shown) <= terminal[0], "\n".join(shown)
    framed = [line for line in shown if line[:1] in "┏┃┡│└"]
    assert framed and all(line[-1] in "┓┃┩│┘" for line in framed), "\n".join(shown)  # uncut
    keys = "".join(line.split("│")[1].strip() for line in shown if line.startswith("│"))
    assert keys == "".join(m.key for m in dump.modules), "\n".join(shown)

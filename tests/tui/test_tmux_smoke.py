"""The installed `workbench` command in a real terminal (tmux): keys in, screen out."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE

COMMAND = Path(sys.executable).parent / "workbench"  # the console script pip installed


class Terminal:
    """A tmux server of our own (its own socket), one window running a command."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-u", "-L", self.socket, *args], check=True,
                              capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "smoke")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "smoke", *keys)

    def wait_for(self, condition: Callable[[str], bool], timeout: float = PATIENCE) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            try:
                screen = self.screen()
            except subprocess.CalledProcessError:  # the window is gone
                screen = ""
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed what was expected:\n{screen}")

    def alive(self) -> bool:
        result = subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "smoke"],
                                capture_output=True)
        return result.returncode == 0


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    assert shutil.which("tmux"), "this test needs tmux"
    assert COMMAND.exists(), f"no installed workbench command at {COMMAND}"
    # A server per test: a server just told to stop may still be going when the next test
    # starts, and one of the same name then fails with "server exited unexpectedly".
    terminal = Terminal(f"workbench-smoke-{os.getpid()}-{secrets.token_hex(4)}")
    yield terminal
    subprocess.run(["tmux", "-L", terminal.socket, "kill-server"], capture_output=True)


def test_installed_command_bisects_from_the_keyboard(terminal: Terminal, example: Path,
                                                     tmp_path: Path) -> None:
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "TMPDIR": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", *environment,
                  "-c", str(tmp_path),  # the current folder: where W proposes to write
                  f"{COMMAND} {example} --theme mono; sleep 3600")
    terminal.tmux("resize-window", "-t", "smoke", "-x", "100", "-y", "30")
    assert terminal.tmux("display", "-p", "-t", "smoke", "#{pane_width}x#{pane_height}") \
        .strip() == "100x30"
    screen = terminal.wait_for(lambda s: "jit_ln" in s and "7 modules" in s)
    assert "theme not loaded" not in screen and "no theme" not in screen  # themes installed
    assert "Modules" in screen and "Timeline" in screen and "IR diff" in screen

    terminal.keys("b")  # bisect the selected execution
    # The diff opens on the culprit scrolled to its first change (the fused computation the
    # pass added), not at the top of the module.
    screen = terminal.wait_for(lambda s: "#30 fusion vs #29" in s and "+ %fused_computation"
                               in s and "HloModule jit_ln" not in s)
    assert "✗" in screen  # the failing badge, a symbol not just a colour

    terminal.keys("L")  # localize: the culprit instruction, marked in the raw diff
    # The report above the diff, then the diff turned to both versions of the instruction.
    terminal.wait_for(lambda s: "program.py:4" in s and "rsqrt.2" in s and "sqrt(" in s)
    terminal.keys("W")  # write the reproducer folder, where it proposes
    terminal.wait_for(lambda s: "write a reproducer of jit_ln" in s and "Enter writes" in s)
    terminal.keys("Enter")
    # "wrote" may end a line: the folder's path is longer than the rest of it.
    terminal.wait_for(lambda s: "wrote" in s and "reproduces" in s)
    written = [p for p in tmp_path.iterdir() if p.name.startswith("workbench-repro-jit_ln")]
    # With its README.txt, and the bug report for XLA's tools.
    assert len(written) == 1 and len(list(written[0].iterdir())) == 5
    assert (written[0] / "bug-report" / "README.md").is_file()

    terminal.keys("?")
    terminal.wait_for(lambda s: "Keys everywhere" in s)
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "Keys everywhere" not in s and "jit_ln" in s)

    terminal.keys("q")
    terminal.wait_for(lambda s: "jit_ln" not in s)


def test_plain_terminal_ascii_locale_no_color(terminal: Terminal, example: Path,
                                              tmp_path: Path) -> None:
    """TERM=screen (16 colours), NO_COLOR and the C locale: the app starts, lists the
    modules, bisects and quits, drawing ASCII only, and gives the terminal back."""
    env = {"TERM": "screen", "NO_COLOR": "1", "LC_ALL": "C", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "80", "-y", "24", *environment,
                  f"{COMMAND} {example}; echo exit=$?; sleep 30")
    terminal.tmux("resize-window", "-t", "smoke", "-x", "80", "-y", "24")
    screen = terminal.wait_for(lambda s: "jit_ln" in s and "7 modules" in s)
    assert screen.isascii(), sorted({c for c in screen if not c.isascii()})
    terminal.keys("b")
    screen = terminal.wait_for(lambda s: "#30 fusion vs #29" in s)
    assert screen.isascii() and "x 0010" in screen  # the failing badge, in ASCII
    escapes = terminal.tmux("capture-pane", "-p", "-e", "-t", "smoke")
    parameters = {int(p) for sgr in re.findall(r"\x1b\[([0-9;]*)m", escapes)
                  for p in sgr.split(";") if p}
    colours = {p for p in parameters if (30 <= p <= 48 and p != 39) or 90 <= p <= 107}
    assert parameters and not colours  # 39 and 49 are the terminal's default colours
    assert 7 in parameters  # reverse marks the cursor instead of a colour
    terminal.keys("q")
    terminal.wait_for(lambda s: "exit=0" in s)
    alternate = terminal.tmux("display", "-p", "-t", "smoke", "#{alternate_on}").strip()
    assert alternate == "0"


@pytest.mark.parametrize("signal_name", ["TERM", "HUP"])
def test_a_signal_closes_the_app_and_restores_the_terminal(terminal: Terminal, example: Path,
                                                          tmp_path: Path,
                                                          signal_name: str) -> None:
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    pid_file = tmp_path / "app.pid"
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", *environment,
                  f"{COMMAND} {example} --theme mono & echo $! > {pid_file}; wait $!; "
                  "echo exit=$?; sleep 3600")

    def pane(flag: str) -> str:
        return terminal.tmux("display", "-p", "-t", "smoke", f"#{{{flag}}}").strip()

    terminal.wait_for(lambda s: "jit_ln" in s and "7 modules" in s)
    assert pane("alternate_on") == "1" and pane("mouse_any_flag") == "1"
    subprocess.run(["kill", f"-{signal_name}", pid_file.read_text().strip()], check=True)
    number = {"TERM": 15, "HUP": 1}[signal_name]
    terminal.wait_for(lambda s: f"exit={128 + number}" in s)
    assert pane("alternate_on") == "0"
    assert pane("mouse_any_flag") == "0"
    assert pane("cursor_flag") == "1"


def test_an_app_that_dies_of_an_error_exits_non_zero(terminal: Terminal, example: Path,
                                                     tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text(
        "import sys\n"
        "from workbench.tui.app import WorkbenchApp\n"
        "from workbench.cli import main\n"
        "def broken(self):\n"
        "    raise RuntimeError('a bug in the app')\n"
        "WorkbenchApp.on_mount = broken\n"
        "sys.exit(main(sys.argv[1:]))\n")
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", *environment,
                  f"{sys.executable} {crash} {example}; echo exit=$?; sleep 3600")
    screen = terminal.wait_for(lambda s: "exit=" in s)
    assert "exit=1" in screen
    assert "a bug in the app" in screen


def test_the_app_ends_when_its_terminal_goes_away(terminal: Terminal, example: Path,
                                                  tmp_path: Path) -> None:
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", *environment,
                  f"exec {COMMAND} {example} --theme mono")
    pid = int(terminal.tmux("display", "-p", "-t", "smoke", "#{pane_pid}"))
    terminal.wait_for(lambda s: "jit_ln" in s and "7 modules" in s)
    terminal.tmux("kill-server")  # the terminal hangs up, as when an SSH connection drops
    deadline = time.monotonic() + PATIENCE
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
            break  # ended; only its exit status is left to collect
        time.sleep(0.05)
    alive = Path(f"/proc/{pid}").exists() and not Path(f"/proc/{pid}/stat").read_text() \
        .split(") ")[1].startswith("Z")
    assert not alive, "the app outlived its terminal by 5 s"


def test_names_with_escapes_leave_the_terminal_alone(terminal: Terminal, tmp_path: Path) -> None:
    from tests.helpers.hostile_names import make_hostile_dump

    dump = make_hostile_dump(tmp_path / "hostile")
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "140", "-y", "40", *environment,
                  f"{COMMAND} {shlex.quote(str(dump))} --theme mono")
    terminal.tmux("select-pane", "-t", "smoke", "-T", "before")
    terminal.wait_for(lambda s: "jit_ln[bold red" in s)
    terminal.keys("3")
    terminal.wait_for(lambda s: "Timeline  jit_ln[bold red" in s)
    terminal.keys("z")  # the timeline, whole width: its title holds the whole name
    terminal.wait_for(lambda s: "Q[$x]␛]0;pwne" in s)  # the escape is shown, not obeyed
    title = terminal.tmux("display", "-p", "-t", "smoke", "#{pane_title}").strip()
    assert title == "before"  # no escape from a name retitled the terminal
    terminal.keys("q")


def test_the_pager_takes_the_terminal_and_gives_it_back(terminal: Terminal, example: Path,
                                                        tmp_path: Path) -> None:
    """`P` runs $PAGER on the diff with the app suspended; the app redraws after it."""
    record = tmp_path / "record"
    pager = tmp_path / "pager.sh"
    pager.write_text(f"#!/bin/sh\nhead -2 \"$1\" > {record}.part\nmv {record}.part {record}\n"
                     f"echo PAGER-RAN; while [ ! -e {tmp_path}/go ]; do sleep 0.1; done\n")
    pager.chmod(0o755)
    env = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
           "PAGER": str(pager), "PATH": os.environ["PATH"]}
    environment = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    terminal.tmux("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", *environment,
                  f"{COMMAND} {example} --theme mono; echo exit=$?; sleep 3600")
    terminal.wait_for(lambda s: "jit_ln" in s and "7 modules" in s)
    terminal.keys("b")
    terminal.wait_for(lambda s: "#30 fusion vs #29" in s)
    terminal.keys("4")
    terminal.keys("P")
    terminal.wait_for(lambda s: "PAGER-RAN" in s and "jit_ln" not in s)  # its own screen
    assert record.read_text().splitlines()[1].startswith("+++ 0028 fusion")
    (tmp_path / "go").touch()  # the user leaves the pager
    terminal.wait_for(lambda s: "#30 fusion vs #29" in s and "PAGER-RAN" not in s)
    terminal.keys("q")
    terminal.wait_for(lambda s: "exit=0" in s)
    assert terminal.tmux("display", "-p", "-t", "smoke", "#{alternate_on}").strip() == "0"

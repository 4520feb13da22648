"""SIGTERM and SIGHUP end the app within a deadline even while its event loop is blocked, and
SIGCONT does not take up again a terminal that has gone away (`SignalGuard`); the installed
command on a terminal that hangs up exits as a shell expects (128 + SIGHUP)."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE
from workbench.tui.signal_guard import SignalGuard

COMMAND = Path(sys.executable).parent / "workbench"


@pytest.fixture
def resumed() -> Iterator[list[int]]:
    """SIGCONT handled as Textual's driver handles it (taking the terminal up again),
    recorded; the handler the test process had is put back afterwards."""
    calls: list[int] = []
    previous = signal.signal(signal.SIGCONT, lambda signum, frame: calls.append(signum))
    yield calls
    signal.signal(signal.SIGCONT, previous)


def test_the_deadline_starts_while_the_event_loop_is_blocked() -> None:
    ended = threading.Event()
    statuses: list[int] = []
    closings: list[int] = []
    previous = signal.getsignal(signal.SIGTERM)

    def end(status: int) -> None:
        statuses.append(status)
        ended.set()

    async def scenario() -> None:
        guard = SignalGuard(closings.append, terminal=None, grace=0.2, end=end)
        assert guard.install()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            # This coroutine does not yield: the loop is blocked, as when closing hangs.
            assert ended.wait(PATIENCE), "the deadline never passed"
            assert statuses == [128 + signal.SIGTERM]
            assert closings == []  # the loop could not run the closing
            await asyncio.sleep(0.05)
            assert closings == [signal.SIGTERM]  # now it has
        finally:
            guard.restore()

    asyncio.run(scenario())
    assert signal.getsignal(signal.SIGTERM) is previous


def test_sigcont_takes_up_only_a_terminal_that_answers(resumed: list[int]) -> None:
    master, terminal = pty.openpty()

    async def scenario() -> None:
        guard = SignalGuard(lambda signum: None, terminal=terminal)
        assert guard.install()
        try:
            os.kill(os.getpid(), signal.SIGCONT)  # back from a suspension (`fg`)
            await asyncio.sleep(0.05)
            assert resumed == [signal.SIGCONT]
            os.close(master)  # the terminal hangs up
            assert not guard.terminal_answers()
            os.kill(os.getpid(), signal.SIGCONT)
            await asyncio.sleep(0.05)
            assert resumed == [signal.SIGCONT]
        finally:
            guard.restore()
            os.close(terminal)

    asyncio.run(scenario())


def test_sigcont_after_a_termination_signal_takes_nothing_up(resumed: list[int]) -> None:
    master, terminal = pty.openpty()
    ended: list[int] = []

    async def scenario() -> None:
        guard = SignalGuard(lambda signum: None, terminal=terminal, grace=60, end=ended.append)
        assert guard.install()
        try:
            os.kill(os.getpid(), signal.SIGHUP)
            os.kill(os.getpid(), signal.SIGCONT)
            await asyncio.sleep(0.05)
            assert guard.terminal_answers() and resumed == []
            assert guard.deadline is not None
            guard.deadline.cancel()
        finally:
            guard.restore()
            os.close(master)
            os.close(terminal)

    asyncio.run(scenario())
    assert ended == []


@pytest.mark.parametrize("keys", [b"", b"b"], ids=["idle", "bisecting"])
def test_the_installed_command_exits_129_when_its_terminal_hangs_up(example: Path,
                                                                    tmp_path: Path,
                                                                    keys: bytes) -> None:
    """Closing the terminal's master side (an SSH connection dropping) sends SIGHUP and
    SIGCONT: the app closes at once, never resumes on the dead terminal, and exits with
    the status a shell reports for SIGHUP."""
    assert COMMAND.exists(), f"no installed workbench command at {COMMAND}"
    environment = {"TERM": "xterm-256color", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path),
                   "PATH": os.environ["PATH"]}
    pid, master = pty.fork()
    if pid == 0:  # the child: the app on the new terminal
        os.execve(COMMAND, [str(COMMAND), str(example), "--theme", "mono"], environment)
    try:
        screen = b""
        deadline = time.monotonic() + PATIENCE
        while b"modules" not in screen:
            assert time.monotonic() < deadline, f"the app never drew: {screen[-500:]!r}"
            if select.select([master], [], [], 0.1)[0]:
                screen += os.read(master, 65536)
        if keys:
            os.write(master, keys)
            time.sleep(0.2)
    finally:
        os.close(master)  # the hang-up
    deadline = time.monotonic() + PATIENCE
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the app outlived its terminal by {PATIENCE:g} s")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP

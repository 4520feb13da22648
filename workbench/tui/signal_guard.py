"""SIGTERM and SIGHUP close the app within a deadline, even when closing blocks; a terminal
that has gone away is not taken up again on SIGCONT.

The signals' default action would end the process where it stands (worker processes left
running, the terminal left in the alternate screen), so the app closes itself as `q` does.
The handlers are plain `signal` handlers, not the event loop's: a loop blocked at that moment
would never run a handler of its own, and the app would outlive its terminal. The handler
starts the deadline at once (`os._exit` when it passes) and hands the closing to the loop.

A hang-up comes with SIGCONT (the kernel sends both; so does tmux), on which Textual takes the
terminal up again as after a suspension (Ctrl+Z, then `fg`). On a terminal that has gone away
that starts an output thread that dies at its first write and an input thread that spins on
the dead terminal; the app's next writes then wait for good on the dead thread's queue. So
SIGCONT resumes the app only while its terminal answers and no termination signal came.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from workbench.termination import TERMINATION_SIGNALS

GRACE_SECONDS = 2.0  # how long a signalled app may take to close and restore the terminal

Handler = Callable[[int, FrameType | None], Any]


class SignalGuard:
    """The app's handlers of SIGTERM, SIGHUP (`on_termination(signum)` on the event loop)
    and SIGCONT, from `install` (in the event loop's thread) to `restore`."""

    def __init__(self, on_termination: Callable[[int], None], terminal: int | None,
                 grace: float = GRACE_SECONDS,
                 end: Callable[[int], object] = os._exit) -> None:
        self.on_termination = on_termination
        self.terminal = terminal  # the terminal's file descriptor, None when there is none
        self.grace = grace
        self.end = end  # called with the exit status when the deadline passes
        self.deadline: threading.Timer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> bool:
        """Take the signals; only the main thread can (elsewhere, as for an app under test,
        nothing changes and False is returned)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._loop = asyncio.get_running_loop()
        for signum in TERMINATION_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._terminated)
        continued = getattr(signal, "SIGCONT", None)
        resume = signal.getsignal(continued) if continued is not None else None
        if continued is not None and callable(resume):
            self._previous[continued] = signal.signal(continued, self._resuming(resume))
        return True

    def restore(self) -> None:
        """Give the signals back to the handlers they had (a deadline started keeps going)."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _terminated(self, signum: int, _frame: FrameType | None) -> None:
        if self.deadline is None:
            self.deadline = threading.Timer(self.grace, self.end, args=(128 + signum,))
            self.deadline.daemon = True
            self.deadline.start()
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the deadline ends it
                self._loop.call_soon_threadsafe(self.on_termination, signum)

    def _resuming(self, resume: Handler) -> Handler:
        def continued(signum: int, frame: FrameType | None) -> None:
            if self.deadline is None and self.terminal_answers():
                resume(signum, frame)

        return continued

    def terminal_answers(self) -> bool:
        return self.terminal is None or terminal_answers(self.terminal)


def terminal_answers(terminal: int) -> bool:
    """The terminal is still there (a terminal that hung up fails every request)."""
    import termios

    try:
        termios.tcgetattr(terminal)
    except (termios.error, OSError):
        return False
    return True


def let_go_of_a_dead_terminal(terminal: int | None) -> None:
    """After a hang-up, point standard output and error at /dev/null: text still buffered
    for the dead terminal would fail to flush at exit (EIO), and Python would then exit with
    120 instead of the status the app chose."""
    if terminal is None or terminal_answers(terminal):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for descriptor in (1, 2):
            os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


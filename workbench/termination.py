"""SIGTERM and SIGHUP end the workbench as cleanly as Ctrl-C does.

Their default action ends the process where it stands: `finally` blocks do not run, so worker
processes would be left computing and a full-screen app would leave the terminal in the
alternate screen. Commands turn them into `SystemExit` (exit status 128 + the signal's
number, as a shell reports it); the app closes itself (see `WorkbenchApp`).
"""

from __future__ import annotations

import signal
from types import FrameType

TERMINATION_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_on_termination_signals() -> None:
    """From now on, SIGTERM and SIGHUP raise `SystemExit` in the main thread."""
    for signum in TERMINATION_SIGNALS:
        signal.signal(signum, _exit)

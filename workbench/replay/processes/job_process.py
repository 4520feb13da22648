"""A child process that runs calls for a Dask worker, so a time limit or a cancel can kill them.

Dask runs tasks in threads of its worker process, and a thread that interprets IR cannot be
stopped. Each Dask worker thread borrows one child (`python -m
workbench.replay.processes.job_process`, started on first use, reused between jobs, replaced
when killed); calls and replies travel through its stdin and stdout as length-prefixed
pickles. It is a plain subprocess, not a multiprocessing one: a Dask worker under a nanny is a
daemonic process, and those may not start multiprocessing children. The child exits when its
parent (the worker) dies.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

HEADER = 8  # bytes of the big-endian length before each pickle
POLL_SECONDS = 0.2
READY = b"R"  # the child's first byte: imports done, a time limit may start counting
PRELOAD = ["numpy", "workbench.replay.steps", "workbench.replay.triage.run"]


class TimeLimit(Exception):
    """The call ran past its time limit and was killed."""


class Stopped(Exception):
    """The caller asked to stop; the call was killed."""


class Died(Exception):
    """The child died during the call (the reason is the message)."""


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


class JobProcess:
    """One child process and the calls it runs, one at a time."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "workbench.replay.processes.job_process", str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        if self.process.stdout.read(len(READY)) != READY:
            self.kill()
            raise Died(f"the job process did not start ({_exit_reason(self.process.returncode)})")

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def call(self, function: Callable[..., Any], args: tuple, time_limit: float | None,
             should_stop: Callable[[], bool] | None = None,
             environment: dict[str, str] | None = None) -> Any:
        """`function(*args)` in the child, with `environment` set for the call; its error
        re-raised as RuntimeError (the traceback)."""
        request = pickle.dumps((function, args, environment or {}),
                               protocol=pickle.HIGHEST_PROTOCOL)
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(len(request).to_bytes(HEADER, "big") + request)
            self.process.stdin.flush()
        except OSError:
            self.kill()
            raise Died(_exit_reason(self.process.returncode)) from None
        start = time.monotonic()
        reply = bytearray()
        size: int | None = None
        descriptor = self.process.stdout.fileno()
        while size is None or len(reply) < HEADER + size:
            now = time.monotonic()
            if time_limit is not None and now - start >= time_limit:
                self.kill()
                raise TimeLimit()
            if should_stop is not None and should_stop():
                self.kill()
                raise Stopped()
            wait = POLL_SECONDS if time_limit is None else min(POLL_SECONDS,
                                                               start + time_limit - now)
            ready, _, _ = select.select([descriptor], [], [], max(0.0, wait))
            if not ready:
                continue
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                self.kill()
                raise Died(_exit_reason(self.process.returncode))
            reply += chunk
            if size is None and len(reply) >= HEADER:
                size = int.from_bytes(reply[:HEADER], "big")
        succeeded, value = pickle.loads(bytes(reply[HEADER:]))
        if not succeeded:
            raise RuntimeError(value)
        return value


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def main() -> None:
    # Ctrl-C in a terminal reaches the whole process group; the worker decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = int(sys.argv[1])
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # what a job prints must not corrupt the replies
    for name in PRELOAD:
        importlib.import_module(name)
    replies.write(READY)
    replies.flush()
    while True:
        header = requests.read(HEADER)
        if len(header) < HEADER:
            return
        function, args, environment = pickle.loads(requests.read(int.from_bytes(header, "big")))
        saved = {name: os.environ.get(name) for name in environment}
        os.environ.update(environment)
        try:
            reply = pickle.dumps((True, function(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:
            reply = pickle.dumps((False, traceback.format_exc()))
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        replies.write(len(reply).to_bytes(HEADER, "big") + reply)
        replies.flush()


if __name__ == "__main__":
    main()

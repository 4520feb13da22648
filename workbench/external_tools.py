"""External tools the workbench runs: finding them, and running them as child processes.

Today these are IREE's runtime tools (`iree-dump-replay`, `iree-run-replay`), which come with
the PyPI package `iree-base-runtime` (the `iree` extra of this package). Readers
(`formats/iree_replay.py`) and replay (`replay/iree_runner.py`) both use this module, so it
sits below both.

A tool is looked for on PATH, then beside the running interpreter (`sys.executable`'s folder,
and the scripts folder of its install scheme): `.venv/bin/workbench` run without activating
the venv, or a pipx install, has the extra's tools in that bin folder but not on PATH.
pip installs each as a small Python script that starts the real binary in a child process, so
a time limit or a cancel must kill the whole process group, not just the script: each tool
starts in a session of its own and is stopped with `killpg`.

A `ToolProcess` is UI-free and thread-friendly: it starts at once, drains stdout and stderr
on reader threads (the tool never blocks on a full pipe, whether or not anyone reads), and
hands the lines to one consumer through `lines()`. `cancel()` may be called from any thread
(a Textual key handler while a worker iterates `lines()`).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

DUMP_TOOL = "iree-dump-replay"
RUN_TOOL = "iree-run-replay"
INSTALL_HINT = (
    "install the IREE runtime tools with `pip install 'dump-triage-workbench[iree]'` "
    "(or `pip install iree-base-runtime`) into this environment, or put their folder on PATH"
)

Stream = Literal["stdout", "stderr"]
Outcome = Literal["ok", "failed", "timeout", "cancelled"]

# IREE prints a failing status as `<source file>:<line>: <CODE>; <message>`.
_STATUS_RE = re.compile(r"(?:^|\s)(?P<code>[A-Z][A-Z_]+[A-Z]); ", re.MULTILINE)
# Colour codes the tools write around some messages (FLAGS ERROR); they are terminal
# control, not part of the message.
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class ToolMissing(Exception):
    """A tool is not installed (not on PATH, not beside the interpreter). `str()` says what
    to install."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"{tool} not found on PATH or in {interpreter_bin_dirs()[0]}: "
                         f"{INSTALL_HINT}")
        self.tool = tool


def interpreter_bin_dirs() -> list[Path]:
    """Where the running interpreter's environment installs commands."""
    dirs = [Path(sys.executable).parent]
    scripts = sysconfig.get_path("scripts")
    if scripts and Path(scripts) not in dirs:
        dirs.append(Path(scripts))
    return dirs


def find_tool(name: str) -> str:
    """The path of tool `name`: on PATH, else beside the interpreter; raises `ToolMissing`
    naming the extra to install."""
    path = shutil.which(name)
    if path is not None:
        return path
    for folder in interpreter_bin_dirs():
        path = shutil.which(name, path=os.fspath(folder))
        if path is not None:
            return path
    raise ToolMissing(name)


def status_code(message: str) -> str | None:
    """The IREE status code a tool's message names (`DATA_LOSS`), or None."""
    match = _STATUS_RE.search(message)
    return match["code"] if match else None


@dataclass(frozen=True)
class OutputLine:
    stream: Stream
    text: str  # without the line ending and colour codes


@dataclass(frozen=True)
class ToolResult:
    """How a tool run ended. `message` is the tool's stderr as it wrote it."""

    command: tuple[str, ...]
    outcome: Outcome
    exit_code: int | None  # None when the run was killed (time limit, cancel)
    message: str
    duration_s: float
    timeout_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def status_code(self) -> str | None:
        return status_code(self.message)

    def describe(self) -> str:
        """One line for people: what happened, with the tool's own message when it failed."""
        if self.outcome == "ok":
            return f"succeeded in {self.duration_s:.2f} s"
        if self.outcome == "timeout":
            return f"stopped at the time limit of {self.timeout_s:g} s"
        if self.outcome == "cancelled":
            return f"cancelled after {self.duration_s:.2f} s"
        return f"failed with exit status {self.exit_code}: {self.message or '(no message)'}"


class ToolProcess:
    """One run of a tool: output lines as they come, a time limit, cancel, and a result."""

    def __init__(self, command: list[str], *, timeout_s: float | None = None) -> None:
        self.command = tuple(command)
        self.timeout_s = timeout_s
        self._lines: queue.Queue[OutputLine | None] = queue.Queue()
        self._stderr: list[str] = []
        self._lock = threading.Lock()
        self._stop_reason: Outcome | None = None
        self._result: ToolResult | None = None
        self._done = threading.Event()
        self._started = time.monotonic()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        assert self._process.stdout is not None and self._process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self._process.stdout, "stdout"),
                             daemon=True),
            threading.Thread(target=self._read, args=(self._process.stderr, "stderr"),
                             daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        threading.Thread(target=self._watch, daemon=True).start()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    @property
    def result(self) -> ToolResult | None:
        """The result once the run has ended (None while it runs)."""
        return self._result

    def lines(self) -> Iterator[OutputLine]:
        """Output lines of both streams as the tool writes them, until it ends (one consumer)."""
        while True:
            line = self._lines.get()
            if line is None:
                return
            yield line

    def wait(self, timeout: float | None = None) -> ToolResult:
        """Block until the run ends (raises TimeoutError if `timeout` passes first)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"{self.command[0]} still running after {timeout} s")
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """Kill the tool and its children; the result says "cancelled". No-op once ended."""
        self._kill("cancelled")

    def _kill(self, reason: Outcome) -> None:
        with self._lock:
            # `returncode` is set once the watcher has reaped the tool (poll() would race it).
            if self._process.returncode is not None or self._stop_reason is not None:
                return
            self._stop_reason = reason
            # The group can end just before killpg(): then there is nothing left to stop.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)

    def _read(self, pipe: IO[str], stream: Stream) -> None:
        with pipe:
            for raw in pipe:
                text = _ANSI_RE.sub("", raw.rstrip("\r\n"))
                if stream == "stderr":
                    self._stderr.append(text)
                self._lines.put(OutputLine(stream, text))

    def _watch(self) -> None:
        # A timer, not wait(timeout): Popen polls with sleeps of up to 50 ms when given a
        # timeout, which would add that much to every short run.
        timer = None
        if self.timeout_s is not None:
            timer = threading.Timer(self.timeout_s, self._kill, args=("timeout",))
            timer.daemon = True
            timer.start()
        exit_code: int | None = self._process.wait()
        if timer is not None:
            timer.cancel()
        # The pipes close when the last process of the group holding them ends.
        for reader in self._readers:
            reader.join()
        with self._lock:
            reason = self._stop_reason
        if reason is None:
            outcome: Outcome = "ok" if exit_code == 0 else "failed"
        else:
            outcome, exit_code = reason, None
        self._result = ToolResult(
            command=self.command,
            outcome=outcome,
            exit_code=exit_code,
            message="\n".join(self._stderr).strip(),
            duration_s=time.monotonic() - self._started,
            timeout_s=self.timeout_s,
        )
        self._done.set()
        self._lines.put(None)

"""Child processes for the IREE tools: streamed lines, verbatim messages, time limit, cancel.

The time limit and cancel are tested on a Python script that starts a grandchild, as pip's
wrapper script starts the real IREE binary: stopping must kill the grandchild too.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from workbench.replay.iree_tools import (
    DUMP_TOOL,
    ToolMissing,
    ToolProcess,
    find_tool,
    status_code,
)

# Prints its grandchild's pid, then waits for it (as the pip wrapper waits for the binary).
WRAPPER = """
import subprocess, sys
child = subprocess.Popen(["sleep", "60"])
print(child.pid, flush=True)
sys.exit(child.wait())
"""


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (a container's init may never reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_lines_and_success() -> None:
    process = ToolProcess(_python(
        "import sys\nprint('one')\nprint('warn', file=sys.stderr)\nprint('two')"))
    lines = list(process.lines())
    assert [line.text for line in lines if line.stream == "stdout"] == ["one", "two"]
    assert [line.text for line in lines if line.stream == "stderr"] == ["warn"]
    result = process.wait()
    assert result.ok and result.outcome == "ok" and result.exit_code == 0
    assert result.message == "warn" and process.finished
    assert result.describe().startswith("succeeded in ")
    process.cancel()  # after the end: nothing to stop, the result stays
    assert process.result == result


def test_failure_keeps_the_message_verbatim() -> None:
    message = "c/runtime/src/iree/io/file_handle.c:373: NOT_FOUND; failed to open file '/x'"
    process = ToolProcess(_python(
        f"import sys\nprint({message!r}, file=sys.stderr)\nsys.exit(1)"))
    result = process.wait()
    assert (result.outcome, result.exit_code, result.message) == ("failed", 1, message)
    assert result.status_code == "NOT_FOUND"
    assert result.describe() == f"failed with exit status 1: {message}"


def test_colour_codes_are_dropped() -> None:
    result = ToolProcess(_python(
        "import sys\nprint('\\x1b[31mFLAGS ERROR\\x1b[0m', file=sys.stderr)\nsys.exit(1)"
    )).wait()
    assert result.message == "FLAGS ERROR"


def test_time_limit_kills_the_process_group() -> None:
    # The limit leaves the wrapper time to start and print even on a loaded machine (a Python
    # start can take a second there); the grandchild sleeps 60 s, far beyond it.
    started = time.monotonic()
    process = ToolProcess(_python(WRAPPER), timeout_s=4)
    grandchild = int(next(iter(process.lines())).text)
    result = process.wait(timeout=30)
    assert result.outcome == "timeout" and result.exit_code is None and not result.ok
    assert 4 <= time.monotonic() - started < 30
    assert result.describe() == "stopped at the time limit of 4 s"
    assert _wait_gone(grandchild)


def test_cancel_from_another_thread() -> None:
    process = ToolProcess(_python(WRAPPER), timeout_s=60)
    seen: list[str] = []
    consumer = threading.Thread(target=lambda: seen.extend(line.text for line in process.lines()))
    consumer.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen, "the wrapper never printed its child's pid"
    assert not process.finished
    process.cancel()
    consumer.join(timeout=10)
    assert not consumer.is_alive()  # lines() ends when the run ends
    result = process.wait(timeout=10)
    assert result.outcome == "cancelled" and result.exit_code is None
    assert result.duration_s < 10
    assert _wait_gone(int(seen[0]))


def test_wait_with_a_timeout_of_its_own() -> None:
    process = ToolProcess(_python(WRAPPER), timeout_s=60)
    with pytest.raises(TimeoutError, match="still running"):
        process.wait(timeout=0.05)
    process.cancel()
    assert process.wait(timeout=10).outcome == "cancelled"


def test_status_code() -> None:
    assert status_code("c/runtime/src/iree/hal/replay/file_reader.c:67: DATA_LOSS; replay "
                       "file length extends past file contents") == "DATA_LOSS"
    assert status_code("FLAGS ERROR\nc/.../flags.c:428: INVALID_ARGUMENT; flag 'x' not "
                       "recognized") == "INVALID_ARGUMENT"
    assert status_code("Segmentation fault") is None
    assert status_code("") is None


def test_missing_tool_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissing) as raised:
        find_tool(DUMP_TOOL)
    assert raised.value.tool == DUMP_TOOL
    assert "pip install 'dump-triage-workbench[iree]'" in str(raised.value)
    assert "pip install iree-base-runtime" in str(raised.value)
    tool = tmp_path / DUMP_TOOL
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert find_tool(DUMP_TOOL) == os.fspath(tool)

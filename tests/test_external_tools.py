"""External tools: found on PATH or beside the interpreter; child processes for the IREE
tools: streamed lines, verbatim messages, time limit, cancel.

The time limit and cancel are tested on a Python script that starts a grandchild, as pip's
wrapper script starts the real IREE binary: stopping must kill the grandchild too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE, wait_for
from workbench.external_tools import (
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
    # The limit leaves the wrapper time to start and print even on a busy machine (a Python
    # start can take seconds there); the grandchild sleeps 60 s, far beyond it.
    started = time.monotonic()
    process = ToolProcess(_python(WRAPPER), timeout_s=10)
    grandchild = int(next(iter(process.lines())).text)
    result = process.wait(timeout=PATIENCE)
    assert result.outcome == "timeout" and result.exit_code is None and not result.ok
    assert time.monotonic() - started >= 10  # not stopped before its limit
    assert result.describe() == "stopped at the time limit of 10 s"
    assert _wait_gone(grandchild)


def test_cancel_from_another_thread() -> None:
    process = ToolProcess(_python(WRAPPER), timeout_s=60)
    seen: list[str] = []
    consumer = threading.Thread(target=lambda: seen.extend(line.text for line in process.lines()))
    consumer.start()
    wait_for(lambda: seen, "the wrapper's line with its child's pid")
    assert not process.finished
    process.cancel()
    consumer.join(timeout=PATIENCE)
    assert not consumer.is_alive()  # lines() ends when the run ends
    result = process.wait(timeout=PATIENCE)
    assert result.outcome == "cancelled" and result.exit_code is None
    assert _wait_gone(int(seen[0]))


def test_wait_with_a_timeout_of_its_own() -> None:
    process = ToolProcess(_python(WRAPPER), timeout_s=60)
    with pytest.raises(TimeoutError, match="still running"):
        process.wait(timeout=0.05)
    process.cancel()
    assert process.wait(timeout=PATIENCE).outcome == "cancelled"


def test_status_code() -> None:
    assert status_code("c/runtime/src/iree/hal/replay/file_reader.c:67: DATA_LOSS; replay "
                       "file length extends past file contents") == "DATA_LOSS"
    assert status_code("FLAGS ERROR\nc/.../flags.c:428: INVALID_ARGUMENT; flag 'x' not "
                       "recognized") == "INVALID_ARGUMENT"
    assert status_code("Segmentation fault") is None
    assert status_code("") is None


def _no_interpreter_tools(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The running interpreter as if it lived in `folder` (no tools beside it)."""
    monkeypatch.setattr(sys, "executable", os.fspath(folder / "python"))
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *args, **kwargs: os.fspath(folder))


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_missing_tool_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    _no_interpreter_tools(monkeypatch, tmp_path / "env" / "bin")
    with pytest.raises(ToolMissing) as raised:
        find_tool(DUMP_TOOL)
    assert raised.value.tool == DUMP_TOOL
    assert "pip install 'dump-triage-workbench[iree]'" in str(raised.value)
    assert "pip install iree-base-runtime" in str(raised.value)
    tool = _executable(tmp_path / DUMP_TOOL)
    assert find_tool(DUMP_TOOL) == os.fspath(tool)


def test_tool_beside_the_interpreter_is_found_without_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv's bin folder that is not on PATH (the venv not activated, or pipx)."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    _no_interpreter_tools(monkeypatch, bin_dir)
    tool = _executable(bin_dir / DUMP_TOOL)
    assert find_tool(DUMP_TOOL) == os.fspath(tool)
    path_tool = _executable(tmp_path / DUMP_TOOL)  # PATH wins, as a shell would choose
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_tool(DUMP_TOOL) == os.fspath(path_tool)


def test_installed_command_finds_the_tools_with_path_not_containing_the_venv(
        corpus: Path) -> None:
    """`.venv/bin/workbench iree FILE` with the venv's bin folder not on PATH."""
    bin_dir = Path(sys.executable).parent
    command = bin_dir / "workbench"
    assert (bin_dir / DUMP_TOOL).exists() and command.exists(), (
        f"needs {DUMP_TOOL} and the workbench command in {bin_dir}: pip install '.[iree]'")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != bin_dir.resolve())
    env = {**os.environ, "PATH": path or os.defpath}
    done = subprocess.run([os.fspath(command), "iree",
                           os.fspath(corpus / "iree" / "jit_f" / "jit_f.ireereplay")],
                          env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    assert "not found" not in done.stderr

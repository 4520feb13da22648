"""SIGTERM and SIGHUP end a command and its worker processes as cleanly as Ctrl-C does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE, wait_for

# A loop of 10^9 iterations: each worker evaluating it computes for far longer than the test.
SLOW_MODULE = """HloModule slow, entry_computation_layout={(s32[])->s32[]}

cond {
  p = s32[] parameter(0)
  limit = s32[] constant(1000000000)
  ROOT lt = pred[] compare(p, limit), direction=LT
}

body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(p, one)
}

ENTRY main {
  x = s32[] parameter(0)
  ROOT w = s32[] while(x), condition=cond, body=body
}
"""


def session_processes(session: int) -> list[int]:
    """The live (not zombie) processes of a session."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        state, sid = fields[0], int(fields[3])
        if sid == session and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def slow_dump(tmp_path: Path) -> Path:
    dump = tmp_path / "dump"
    dump.mkdir()
    for number in (1, 2):
        (dump / f"module_000{number}.slow.before_optimizations.txt").write_text(SLOW_MODULE)
        (dump / f"module_000{number}.slow.0001.pipeline.after_pass.before_next.txt") \
            .write_text(SLOW_MODULE)
    return dump


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen]]:
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:  # whatever the test left: kill its whole session
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_signal_ends_triage_and_every_worker(slow_dump: Path, signum: signal.Signals,
                                               started: list[subprocess.Popen]) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "triage", str(slow_dump), "--fake-data", "--jobs",
         "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    started.append(process)
    # The command, the fork server, the resource tracker and two busy workers.
    wait_for(lambda: process.poll() is not None or len(session_processes(process.pid)) >= 5,
             "the workers started")
    assert process.poll() is None, process.communicate()
    time.sleep(0.5)  # the workers are inside the loop now
    process.send_signal(signum)
    # SIGKILL cannot be handled: the kernel ends the workers when their parent goes.
    expected = -signum if signum == signal.SIGKILL else 128 + signum
    assert process.wait(timeout=PATIENCE) == expected
    # The workers' loop runs for far longer than the wait: only an ended worker is gone.
    wait_for(lambda: session_processes(process.pid) == [], "every process of the command ended")

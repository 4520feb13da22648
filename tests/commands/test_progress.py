"""The progress bar: on stderr when it is a terminal, never with --json or into a pipe."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE
from workbench.output.progress import Progress

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"


def run_with_terminal_stderr(*words: str) -> tuple[int, str, str]:
    """Run `workbench WORDS` with stdout a pipe and stderr a pseudo-terminal."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "workbench", *words],
                               stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    terminal = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process ended
            break
        if not chunk:
            break
        terminal += chunk
    stdout, _ = process.communicate(timeout=PATIENCE)
    os.close(leader)
    return process.returncode, stdout.decode(), terminal.decode(errors="replace")


@pytest.mark.parametrize("json_output", [False, True])
def test_triage_progress_only_on_a_terminal_and_not_with_json(json_output: bool) -> None:
    words = ["triage", str(DUMP), "--jobs", "0", "--no-cache"] + (["--json"] * json_output)
    status, stdout, terminal = run_with_terminal_stderr(*words)
    assert status == 1
    if json_output:
        assert terminal == ""
        assert stdout.lstrip().startswith("{")
    else:
        assert "triage" in terminal and "/9" in terminal and "failing" in terminal
        assert "failing" not in stdout  # the bar stays off the results


def test_no_progress_into_a_pipe() -> None:
    done = subprocess.run([sys.executable, "-m", "workbench", "triage", str(DUMP), "--jobs",
                           "0", "--no-cache"], capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 1
    assert done.stderr == ""
    assert "1 mismatch" in done.stdout


def test_bisect_progress_on_a_terminal() -> None:
    status, stdout, terminal = run_with_terminal_stderr(
        "bisect", str(DUMP), "module_0010", "--execution", "snapshot.-17687811")
    assert status == 1
    assert "bisect" in terminal and "failing" in terminal
    assert "culprit" in stdout


def test_bisect_progress_says_which_evaluation_and_the_memory_of_the_tree() -> None:
    status, _, terminal = run_with_terminal_stderr(
        "bisect", str(DUMP), "module_0010", "--execution", "snapshot.-17687811")
    assert status == 1
    phases = ("reference", "f64 truth", "random rounding", "step ")
    assert any(phase in terminal for phase in phases), terminal
    assert re.search(r"\d+(\.\d+)? MB", terminal), terminal  # the process tree's memory
    assert re.search(r"~\d+ s left", terminal), terminal  # the replay's own estimate


def test_progress_counts_failures_even_without_a_bar() -> None:
    with Progress("triage", 3, enabled=False) as progress:
        progress.advance(failed=True)
        progress.advance()
    assert progress.failures == 1


def test_mlir_replay_directory_progress_on_a_terminal(corpus: Path, tmp_path: Path) -> None:
    trace, snapshot = "module_0000.jit_f.mlir-trace.pb", "module_0000.jit_f.snapshot.0.pb"
    for folder, prefix in (("mlir-trace-clean", "module_0001.jit_g"),
                           ("mlir-trace-broken", "module_0002.jit_h")):
        shutil.copy(corpus / "mlir" / folder / trace, tmp_path / f"{prefix}.mlir-trace.pb")
        shutil.copy(corpus / "mlir" / folder / snapshot, tmp_path / f"{prefix}.snapshot.0.pb")
    status, stdout, terminal = run_with_terminal_stderr(
        "mlir-replay", f"--mlir-compilation-trace-dir={tmp_path}")
    assert status == 1
    assert "mlir-replay" in terminal and "/2" in terminal and "failing" in terminal
    assert "1 of 2 traces fail" in stdout

"""`workbench iree`: summary, records, replay, and what users see when something is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CliRun, run_cli
from tests.helpers.patience import PATIENCE

TOOLS = ("iree-dump-replay", "iree-run-replay")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> CliRun:
    return run_cli(capsys, "iree", *argv)


@pytest.fixture
def capture(corpus: Path) -> str:
    return str(corpus / "iree" / "jit_f" / "jit_f.ireereplay")


@pytest.fixture
def truncated(corpus: Path) -> str:
    return str(corpus / "iree" / "jit_f" / "truncated.ireereplay")


def test_summary_json(capture: str, capsys: pytest.CaptureFixture[str],
                      iree_tools: None) -> None:
    status, out, _ = _run(capsys, capture, "--json")
    assert status == 0
    shown = json.loads(out)
    summary = shown["summary"]
    assert (summary["record_count"], summary["object_count"], summary["operation_count"]) == (
        63, 16, 46)
    assert summary["scope_begin_count"] == 3 and summary["scopes"] == ["init", "execute",
                                                                       "deinit"]
    assert summary["hermetic"] is True and summary["strict_replay_supported"] is True
    assert shown["executables"] == [{"id": 4, "format": "embedded-elf-x86_64",
                                     "function_count": 2, "data_length": 5272,
                                     "prepared_at": 11}]


def test_summary_text(capture: str, capsys: pytest.CaptureFixture[str],
                      iree_tools: None) -> None:
    status, out, _ = _run(capsys, capture)
    assert status == 0
    assert "records: 63 (16 objects, 46 operations, 0 unsupported)" in out
    assert "scopes: 3 (init, execute, deinit)" in out
    assert "hermetic: yes" in out and "strict replay supported: yes" in out
    assert "id 4: embedded-elf-x86_64, 2 functions" in out


def test_records(capture: str, capsys: pytest.CaptureFixture[str], iree_tools: None) -> None:
    status, out, _ = _run(capsys, capture, "--operation", "device.queue_execute", "--json")
    assert status == 0
    records = json.loads(out)["records"]
    assert [r["sequence_ordinal"] for r in records] == [42, 45, 55]
    assert all(r["scopes"] == ["execute"] for r in records)
    assert records[0]["payload"]["command_buffer_id"] == 5
    status, out, _ = _run(capsys, capture, "--records", "--kind", "object", "--scope", "init")
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == 2 and all(" object " in line and " init " in line for line in lines)
    assert "device:1" in lines[0] and "allocator:2" in lines[1]
    status, out, err = _run(capsys, capture, "--kind", "objects")
    assert status == 0 and out == ""
    assert "no records match; kinds: object, operation, session" in err


def test_replay(capture: str, truncated: str, capsys: pytest.CaptureFixture[str],
                iree_tools: None) -> None:
    status, out, _ = _run(capsys, capture, "--replay", "--device", "local-sync")
    assert status == 0 and "on local-sync succeeded in" in out
    status, out, err = _run(capsys, truncated, "--replay")
    assert status == 1 and out == ""
    assert "failed with exit status 1: " in err
    assert "DATA_LOSS; replay file length extends past file contents" in err
    # A failed replay leaves nothing behind: the next one works.
    status, out, _ = _run(capsys, capture, "--replay", "--json", "--timeout", "60")
    shown = json.loads(out)
    assert status == 0 and shown["outcome"] == "ok" and shown["exit_code"] == 0
    status, out, _ = _run(capsys, truncated, "--replay", "--json")
    shown = json.loads(out)
    assert status == 1 and shown["outcome"] == "failed" and shown["status_code"] == "DATA_LOSS"


def test_summary_of_truncated_capture(truncated: str, capsys: pytest.CaptureFixture[str],
                                      iree_tools: None) -> None:
    status, out, err = _run(capsys, truncated)
    assert status == 1 and out == ""
    assert err.startswith(f"workbench iree: {truncated}: iree-dump-replay failed")
    assert "DATA_LOSS" in err


def test_substitution_of_unknown_executable(capture: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            iree_tools: None) -> None:
    status, _, err = _run(capsys, capture, "--replay", "--executable-substitution",
                          f"7={tmp_path / 'k.so'}")
    assert status == 2
    assert "no executable 7 in the capture (executables: 4)" in err


def test_bad_arguments(capture: str, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, str(tmp_path / "gone.ireereplay"))
    assert status == 2 and "no such file" in err
    status, _, err = _run(capsys, capture, "--replay", "--file-remap", "/only-a-prefix")
    assert status == 2 and "--file-remap takes FROM=TO, got '/only-a-prefix'" in err
    status, _, err = _run(capsys, capture, "--replay", "--scope", "execute")
    assert status == 2 and "--replay does not combine with --records" in err


def _path_without_iree_tools() -> str:
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any(os.path.exists(os.path.join(d, tool)) for tool in TOOLS)]
    return os.pathsep.join(kept)


# `workbench` in an interpreter whose bin folder has no tools (the tools are also looked for
# beside the interpreter, where the `iree` extra installs them).
_WITHOUT_TOOLS_BESIDE = """
import sys, sysconfig
sys.executable = "/nonexistent/bin/python"
sysconfig.get_path = lambda *args, **kwargs: "/nonexistent/bin"
from workbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("extra", [[], ["--replay"], ["--records", "--json"]])
def test_missing_tools_say_what_to_install(capture: str, extra: list[str]) -> None:
    env = {**os.environ, "PATH": _path_without_iree_tools()}
    done = subprocess.run([sys.executable, "-c", _WITHOUT_TOOLS_BESIDE, "iree", capture,
                           *extra], capture_output=True, text=True, env=env, timeout=PATIENCE)
    assert done.returncode == 3
    assert "Traceback" not in done.stderr + done.stdout
    shown = json.loads(done.stdout)["error"] if "--json" in extra else done.stderr
    assert "not found on PATH" in shown
    assert "pip install 'dump-triage-workbench[iree]'" in shown
    assert "pip install iree-base-runtime" in shown

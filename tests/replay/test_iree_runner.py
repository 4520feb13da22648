"""Replaying IREE HAL captures with `iree-run-replay` (live tests need the `iree` extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.replay.iree_runner import (
    ReplayOptions,
    check_substitutions,
    replay_command,
    split_assignment,
    start_replay,
)

JSONL = Path(__file__).parent.parent / "data" / "iree-dump-replay" / "jit_f.jsonl"


def test_replay_command() -> None:
    options = ReplayOptions(
        device="local-task",
        file_remaps=(("/mnt/capture", "/mnt/replay"),),
        executable_substitutions=(("4", "k.so"), ("5@embedded-elf-x86_64", "l.so")),
    )
    here = Path.cwd()
    assert replay_command(Path("c.ireereplay"), options, "iree-run-replay") == [
        "iree-run-replay", "--device=local-task",
        "--replay_file_remap=/mnt/capture=/mnt/replay",
        f"--replay_executable_substitution=4={here / 'k.so'}",
        f"--replay_executable_substitution=5@embedded-elf-x86_64={here / 'l.so'}",
        str(here / "c.ireereplay")]


def test_a_capture_named_like_a_flag_is_replayed_as_a_file(corpus: Path, iree_tools: None,
                                                           tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    capture = tmp_path / "--flagfile=flags.ireereplay"
    capture.write_bytes((corpus / "iree" / "jit_f" / "jit_f.ireereplay").read_bytes())
    monkeypatch.chdir(tmp_path)
    result = start_replay(Path("--flagfile=flags.ireereplay"),
                          ReplayOptions(device="local-sync")).wait()
    assert result.ok, result.describe()


def test_split_assignment() -> None:
    assert split_assignment("/a=/b=c", "--file-remap", "FROM=TO") == ("/a", "/b=c")
    assert split_assignment("/a=", "--file-remap", "FROM=TO") == ("/a", "")
    for bad in ("/a", "=/b"):
        with pytest.raises(ValueError, match=f"--file-remap takes FROM=TO, got '{bad}'"):
            split_assignment(bad, "--file-remap", "FROM=TO")


def test_check_substitutions() -> None:
    assert check_substitutions([("4", "k.so"), ("4@fmt", "k.so"), ("all", "k.so")], [4]) == []
    (problem,) = check_substitutions([("4", "k.so"), ("7@fmt", "k.so")], [4, 9])
    assert problem == ("no executable 7 in the capture (executables: 4, 9); "
                       "the replay would ignore 7@fmt")
    assert check_substitutions([("1", "k.so")], []) == [
        "no executable 1 in the capture (executables: none); the replay would ignore 1"]


@pytest.fixture
def captured_executable(tmp_path: Path, corpus: Path) -> Path:
    """The capture's own executable 4, cut out of it at the range the dumper reports."""
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()]
    (prepare,) = [r for r in rows if r.get("operation") == "executable_cache.prepare_executable"]
    data = prepare["payload"]["data_range"]
    capture = (corpus / "iree" / "jit_f" / "jit_f.ireereplay").read_bytes()
    path = tmp_path / "executable_4.so"
    path.write_bytes(capture[data["offset"]: data["offset"] + data["length"]])
    return path


def test_replay_succeeds_on_local_sync(corpus: Path, iree_tools: None) -> None:
    run = start_replay(corpus / "iree" / "jit_f" / "jit_f.ireereplay", ReplayOptions())
    assert list(run.lines()) == []  # a clean replay prints nothing
    result = run.wait()
    assert result.ok and result.exit_code == 0 and result.message == ""
    assert "--device=local-sync" in result.command


def test_truncated_capture_fails_with_data_loss(corpus: Path, iree_tools: None) -> None:
    run = start_replay(corpus / "iree" / "jit_f" / "truncated.ireereplay", ReplayOptions())
    stderr = [line.text for line in run.lines() if line.stream == "stderr"]
    result = run.wait()
    assert result.outcome == "failed" and result.exit_code == 1
    assert result.status_code == "DATA_LOSS"
    assert result.message.endswith("DATA_LOSS; replay file length extends past file contents")
    assert result.message == "\n".join(stderr)  # streamed and kept, both verbatim


def test_substituting_the_captured_executable(corpus: Path, captured_executable: Path,
                                              iree_tools: None) -> None:
    capture = corpus / "iree" / "jit_f" / "jit_f.ireereplay"
    same = ReplayOptions(executable_substitutions=(("4", str(captured_executable)),))
    assert start_replay(capture, same).wait().ok
    garbage = captured_executable.with_name("garbage.bin")
    garbage.write_bytes(b"\0garbage" * 64)
    bad = ReplayOptions(executable_substitutions=(("4", str(garbage)),))
    result = start_replay(capture, bad).wait()
    assert result.outcome == "failed" and result.status_code == "NOT_FOUND"
    assert "captured executable 4" in result.message and str(garbage) in result.message


def test_file_remap_and_unknown_device(corpus: Path, iree_tools: None) -> None:
    capture = corpus / "iree" / "jit_f" / "jit_f.ireereplay"
    # The capture is hermetic: a remap has nothing to apply to and changes nothing.
    assert start_replay(capture, ReplayOptions(file_remaps=(("/mnt/a", "/mnt/b"),))).wait().ok
    result = start_replay(capture, ReplayOptions(device="no-such-driver")).wait()
    assert result.outcome == "failed" and result.status_code == "NOT_FOUND"
    assert "no-such-driver" in result.message

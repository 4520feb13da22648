"""Exit statuses a CI can trust: a run that finds no difference but could not judge
everything (an unsupported op, an error, nothing to judge) exits 5, never 0, and says how
many outcomes were judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, run_json
from tests.helpers.replay_fakes import FAKE

FILES = [
    "module_0002.jit_two.before_optimizations.txt",
    "module_0002.jit_two.0000.p.after_good.before_x.txt",
    "module_0002.jit_two.snapshot.7.pb",
    "module_0003.jit_three.before_optimizations.txt",
    "module_0003.jit_three.0000.p.after_unsupported.before_x.txt",
    "module_0003.jit_three.snapshot.8.pb",
]
# A step whose one instruction the evaluator does not implement.
UNSUPPORTED_STEP = """HloModule jit_u, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %y = f32[4]{0} custom-call(%x), custom_call_target="no_such_target"
}
"""
GOOD_STEP = """HloModule jit_u, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %y = f32[4]{0} negate(%x)
}
"""


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    root = tmp_path / "dump"
    root.mkdir()
    for name in FILES:
        (root / name).touch()
    return root


def test_replay_of_an_unsupported_step_is_not_a_success(
        dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "replay", dump, "module_0003", "--backend", FAKE)
    assert status == 5
    assert "2 of 2 steps replayed: 1 ok, 0 mismatch, 1 unsupported, 0 error; 1 judged, " \
           "1 not judged" in out
    status, report = run_json(capsys, "replay", dump, "module_0003", "--backend", FAKE,
                              "--json")
    assert status == 5 and (report["judged"], report["unjudged"]) == (1, 1)
    status, report = run_json(capsys, "replay", dump, "module_0002", "--backend", FAKE,
                              "--json")
    assert status == 0 and (report["judged"], report["unjudged"]) == (2, 0)


def test_bisect_of_an_unsupported_step_is_not_a_success(
        dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "bisect", dump, "module_0003", "--backend", FAKE)
    assert status == 5
    assert "1 steps judged, 1 not judged" in out
    status, report = run_json(capsys, "bisect", dump, "module_0003", "--backend", FAKE,
                              "--json")
    assert status == 5 and report["status"] == "unsupported"
    assert (report["judged"], report["unjudged"]) == (1, 1)


def test_triage_with_an_unsupported_execution_is_not_a_success(
        dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "triage", dump, "--backend", FAKE, "--jobs", "0")
    assert status == 5
    assert "2 execution(s): 0 mismatch, 0 error, 1 unsupported, 1 ok; 1 judged, 1 not judged" \
        in out
    status, report = run_json(capsys, "triage", dump, "--backend", FAKE, "--jobs", "0",
                              "--json")
    assert status == 5 and (report["judged"], report["unjudged"]) == (1, 1)


def test_help_gives_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("replay", "bisect", "triage", "localize", "reduce"):
        with pytest.raises(SystemExit):
            run_cli(capsys, command, "--help")
        assert "Exit status 5 when nothing differs but something could not be judged" in \
            " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", [["localize", "0", "1"], ["reduce"]])
def test_localize_and_reduce_of_an_unsupported_op_are_not_judged(
        tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "dump"
    root.mkdir()
    (root / "module_0001.jit_u.before_optimizations.txt").write_text(GOOD_STEP)
    (root / "module_0001.jit_u.0000.p.after_bad.before_x.txt").write_text(UNSUPPORTED_STEP)
    out = tmp_path / "reduced"
    extra = ["--out", str(out)] if command == ["reduce"] else []
    status, _, err = run_cli(capsys, command[0], root, "jit_u", *command[1:], "--fake-data",
                             *extra)
    assert status == 5, err
    assert "no_such_target" in err

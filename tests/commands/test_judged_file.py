"""Triage's culprit names the file its replay judged: an HLO step's proto where it reads, not
its text (the two may disagree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_json

EXAMPLE = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"


def test_the_culprit_names_the_proto_it_judged(capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "triage", EXAMPLE, "--no-cache", "--jobs", "0", "--json")
    assert status == 1
    culprits = [r["culprit"] for r in payload["results"] if r["culprit"] is not None]
    assert culprits and all(c["file"].endswith(".hlo.pb") for c in culprits)
    assert (EXAMPLE / culprits[0]["file"]).is_file()


def test_replay_json_says_which_file_each_step_was_judged_from(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "replay", EXAMPLE, "module_0010", "--json")
    assert status == 1
    for entry in payload["results"]:
        assert entry["judged_file"].endswith(".hlo.pb"), entry
        assert entry["file"].endswith(".txt")  # the text, as `ls --json` names the step
        assert (EXAMPLE / entry["judged_file"]).is_file()

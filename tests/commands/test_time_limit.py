"""`--time-limit` takes seconds: nan, inf and negative numbers are refused by the parser with a
clear message, and 0 means no limit on every command that has the option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import build_parser, main

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
COMMANDS = {"triage": ["triage", "dump"], "replay": ["replay", "dump", "m"],
            "bisect": ["bisect", "dump", "m"],
            "mlir-replay": ["mlir-replay", "--mlir-compilation-trace", "t.pb"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", ["nan", "-1", "inf", "-inf", "1e999", "-0.5", "soon"])
def test_what_is_not_a_time_is_refused(command: str, value: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser(command).parse_args([*COMMANDS[command], f"--time-limit={value}"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --time-limit: '{value}' is not a" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_zero_means_no_limit(command: str) -> None:
    parser = build_parser(command)
    assert parser.parse_args([*COMMANDS[command], "--time-limit", "0"]).time_limit is None
    assert parser.parse_args([*COMMANDS[command], "--time-limit", "2.5"]).time_limit == 2.5


def test_replay_with_a_zero_time_limit_evaluates_every_step(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(DUMP), "module_0010", "--time-limit", "0", "--json"]) == 1
    statuses = {r["status"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert statuses == {"ok", "mismatch"}

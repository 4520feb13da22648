"""The one way tests run the `workbench` command in this process: `run_cli(capsys, *argv)`
gives its exit status and what it printed; `run_json` parses what `--json` printed."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest

from workbench.cli import main


class CliRun(NamedTuple):
    status: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> CliRun:
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return CliRun(status, captured.out, captured.err)


def run_json(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, Any]:
    status, out, _ = run_cli(capsys, *argv)
    return status, json.loads(out)

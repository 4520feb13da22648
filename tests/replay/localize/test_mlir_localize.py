"""MLIR localization on the xDSL example: the faulty strength reduction's `%scaled`."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.localize.culprit import localize_backend_steps
from workbench.replay.steps import open_replay

EXAMPLE = Path(__file__).parents[3] / "examples" / "xdsl-faulty-pass"


def test_bisect_localize_names_the_rewritten_op(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", str(EXAMPLE), "dense_relu", "--localize", "--json"]) == 1
    culprit = json.loads(capsys.readouterr().out)["culprit"]
    assert culprit["pass"] == "StrengthReduceMultiplyPass"
    instruction = culprit["instruction"]
    assert (instruction["name"], instruction["opcode"], instruction["computation"]) == (
        "%scaled", "arith.addf", "@main")
    assert instruction["max_abs_error"] > instruction["bound"]


def test_both_versions_and_first_departing_iteration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["localize", str(EXAMPLE), "dense_relu", "2", "3"]) == 1
    out = capsys.readouterr().out
    assert ">         %scaled = arith.mulf %relu, %half : f32" in out
    assert ">         %scaled = arith.addf %relu, %relu : f32" in out
    # relu is 0 in the first two iterations, where x * 0.5 == x + x: it departs in the third.
    assert "occurrence 2" in out


def test_no_wolf_on_the_other_passes() -> None:
    module = scan(EXAMPLE).modules[0]
    with open_replay(EXAMPLE, module, module.executions[0]) as replay:
        steps, arguments, backend = replay.steps, replay.inputs.arguments, replay.backend
    named = [after.index for before, after in itertools.pairwise(steps)
             if localize_backend_steps(backend, before, after, arguments).found]
    assert named == [3]  # StrengthReduceMultiplyPass only

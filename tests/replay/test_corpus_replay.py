"""Replay, bisect and triage on the real XLA dumps of the corpus, with the numpy evaluator.

The clean dumps replay to `ok` at every step; in `layernorm-broken-fusion` (rsqrt planted as
sqrt from XLA step 0028 on) triage names module_0010's step 0028, pass `fusion`.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.bisect import bisect_replay
from workbench.replay.steps import open_replay

CLEAN = ["mlp", "layernorm", "fori_loop", "int_ops", "slicing"]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "layernorm-broken-fusion"




def executions_of(folder: Path) -> set[tuple[str, str]]:
    return {(m.key, e.id) for m in scan(folder).modules for e in m.executions}


@pytest.mark.parametrize("name", CLEAN)
def test_clean_dump_every_step_ok(name: str, corpus: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus / "xla" / name
    status, out, _ = run_cli(capsys, "triage", folder, "--json", "--linear", "--jobs", "2")
    results = json.loads(out)["results"]
    assert status == 0
    assert {(r["module"], r["execution"]) for r in results} == executions_of(folder)
    steps = {m.key: len(m.ir_steps("hlo")) for m in scan(folder).modules}
    for result in results:
        assert result["status"] == "ok", result
        assert result["evaluations"] == result["steps"] == steps[result["module"]]
        assert result["recorded"]["ok"] is True  # the reference reproduces the recording
        assert result["skipped"] == [] and result["contradictions"] == []


@pytest.mark.parametrize("name", CLEAN)
def test_clean_dump_triage_bisects_to_ok(name: str, corpus: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "triage", corpus / "xla" / name, "--json")
    results = json.loads(out)["results"]
    assert status == 0
    assert {r["status"] for r in results} == {"ok"}
    assert all(r["evaluations"] == 2 for r in results)  # reference and last step


@pytest.mark.parametrize("where", ["corpus", "example"])
def test_broken_fusion_names_the_culprit(where: str, corpus: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus / "xla" / "layernorm-broken-fusion" if where == "corpus" else EXAMPLE
    status, out, _ = run_cli(capsys, "triage", folder, "--json")
    results = json.loads(out)["results"]
    assert status == 1
    assert {(r["module"], r["execution"]) for r in results} == executions_of(folder)
    failing = [r for r in results if r["status"] != "ok"]
    assert [r["module"] for r in failing] == ["module_0010"]
    result = failing[0]
    assert result["status"] == "mismatch"
    culprit = result["culprit"]
    assert culprit["xla_step"] == 28 and culprit["pass"] == "fusion"
    assert ".0028." in culprit["file"] and "after_fusion" in culprit["file"]
    module = scan(folder).find_module("module_0010")
    assert module.steps[culprit["index"]].xla_step == 28
    count = len(module.ir_steps("hlo"))
    assert result["steps"] == count
    assert result["evaluations"] <= math.ceil(math.log2(count)) + 2
    assert result["recorded"]["ok"] is False  # the real run was broken too


def test_broken_fusion_linear_agrees_and_is_monotone(corpus: Path) -> None:
    folder = corpus / "xla" / "layernorm-broken-fusion"
    dump = scan(folder)
    module = dump.find_module("jit_ln")
    with open_replay(dump.root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay, linear=True)
    assert verdict.culprit is not None and verdict.culprit.step.xla_step == 28
    assert verdict.contradictions == []
    kinds = [r.kind for r in verdict.results]
    first = kinds.index("mismatch")
    assert set(kinds[:first]) == {"ok"} and set(kinds[first:]) == {"mismatch"}


def test_replay_command_on_broken_fusion(corpus: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus / "xla" / "layernorm-broken-fusion"
    out_dir = tmp_path / "literals"
    status, out, _ = run_cli(capsys, "replay", folder, "jit_ln", "--print-changes-only",
                          "--dump-literals", out_dir)
    assert status == 1
    assert ("Running IR after fusion (step 30, XLA step 0028, pipeline "
            "HLO_passes_after_layout_assignment).") in out
    assert out.count("Results:") == 2  # the reference, then the broken result once
    assert "recorded result vs reference: mismatch" in out
    manifest = json.loads((out_dir / "literals.json").read_text())["files"]
    actual = [m for m in manifest if m["role"] == "actual"]
    assert actual[0]["step"] == 30 and actual[0]["pass"] == "fusion"
    expected = np.load(out_dir / "expected.npy")
    broken = np.load(out_dir / actual[0]["file"])
    recorded = np.load(out_dir / "recorded.npy")
    assert expected.shape == broken.shape == recorded.shape
    assert not np.allclose(expected, broken)
    np.testing.assert_allclose(broken, recorded, rtol=1e-4, atol=1e-5)


def test_bisect_command(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "bisect", corpus / "xla" / "layernorm-broken-fusion",
                          "module_0010", "--json")
    payload = json.loads(out)
    assert status == 1
    assert payload["culprit"]["xla_step"] == 28
    assert payload["evaluations"] == len(payload["results"]) <= 8


def test_fake_data_replays_without_a_snapshot(corpus: Path) -> None:
    from workbench.replay.inputs import InputSpec

    dump = scan(corpus / "xla" / "layernorm-broken-fusion")
    module = dump.find_module("jit_ln")
    with open_replay(dump.root, module, None, InputSpec(fake_data=True, seed=3)) as replay:
        verdict = bisect_replay(replay)
    assert verdict.culprit is not None and verdict.culprit.step.xla_step == 28
    assert "no recorded result to check (inputs: fake data (seed 3))" in verdict.detail


def test_fake_data_types_are_read_in_the_worker(corpus: Path, tmp_path: Path) -> None:
    """With a process runner the entry's parameter types are read in the worker (a large
    module is never parsed in a UI's process): same inputs, same problem text."""
    from workbench.facts import FACTS
    from workbench.replay.inputs import InputError, InputSpec
    from workbench.replay.steps import ProcessRunner
    from workbench.sources import ReadError

    spec = InputSpec(fake_data=True, seed=3)
    dump = scan(corpus / "xla" / "layernorm-broken-fusion")
    module = dump.find_module("jit_ln")
    with open_replay(dump.root, module, None, spec) as inline:
        expected = inline.inputs.arguments
    FACTS.clear()
    runner = ProcessRunner()
    try:
        with open_replay(dump.root, module, None, spec, runner=runner) as replay:
            assert len(FACTS) == 0  # nothing parsed here
            assert len(replay.inputs.arguments) == len(expected) > 0
            for got, want in zip(replay.inputs.arguments, expected, strict=True):
                np.testing.assert_array_equal(got, want)
            first = module.ir_steps("hlo")[0]
            files = [s.file for s in (first.proto, first.text) if s is not None]
            copy = tmp_path / "damaged"
            shutil.copytree(dump.root, copy)
            for file in files:  # the first step unreadable both ways
                (copy / file).write_text("HloModule broken\n")
            damaged = scan(copy).find_module("jit_ln")
            with pytest.raises(ReadError) as here:
                open_replay(copy, damaged, None, spec)
            with pytest.raises(InputError) as there:
                open_replay(copy, damaged, None, spec, runner=runner)
            assert str(there.value) == str(here.value)
    finally:
        runner.close()


def test_elided_constant_in_a_text_only_step_is_unsupported(corpus: Path,
                                                            tmp_path: Path) -> None:
    # A derived dump: the text of one step with a constant's literal elided as XLA prints
    # large ones, and no .hlo.pb beside it.
    source = corpus / "xla" / "mlp"
    copy = tmp_path / "mlp"
    shutil.copytree(source, copy)
    dump = scan(copy)
    for module in dump.modules:
        for step in module.ir_steps("hlo"):
            text = dump.path(step.text.file).read_text() if step.text else ""
            lines = text.splitlines()
            hits = [i for i, line in enumerate(lines) if " constant({" in line
                    and "{...}" not in line]
            if hits and step.proto is not None:
                line = lines[hits[0]]
                start = line.index("constant(") + len("constant(")
                lines[hits[0]] = line[:start] + "{...})" + line[line.index(")", start) + 1:]
                dump.path(step.text.file).write_text("\n".join(lines) + "\n")
                dump.path(step.proto.file).unlink()
                target = (module.key, step.index)
                break
        else:
            continue
        break
    else:
        pytest.fail("no step with an array constant in the mlp dump")
    dump = scan(copy)
    module = dump.find_module(target[0])
    backend = open_backend(dump.root, module)
    assert isinstance(backend, HloBackend)
    step = next(s for s in module.steps if s.index == target[1])
    assert step.proto is None
    with open_replay(dump.root, module, module.executions[0]) as replay:
        position = replay.steps.index(step)
        assert replay.evaluate(position).status == "unsupported: elided constant"

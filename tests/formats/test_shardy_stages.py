"""Shardy's stage dumps (`shardy/<module>/NN.<stage>.mlir`) as steps of their XLA module, and
a multi-device module's missing snapshots said plainly (a real JAX 0.12 dump on 8 devices)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from workbench.diff.steps import diff_steps, diff_with_previous, find_step
from workbench.formats.xla_devices import device_count, no_snapshot_note
from workbench.index import scan
from workbench.replay.inputs import InputSpec
from workbench.replay.triage.run import triage_jobs

DUMP = Path(__file__).parent.parent / "data" / "producers" / "shardy_stages"
STAGES = ["input_module", "before_propagation", "after_propagation",
          "after_partitioner_passes", "output_module"]


def test_stages_are_steps_of_their_xla_module_where_shardy_ran() -> None:
    dump = scan(DUMP)
    assert [(m.key, m.format) for m in dump.modules] == [("module_0010", "xla")]
    assert not dump.problems
    module = dump.modules[0]
    count = module.step_count  # counted before the steps are made
    stages = [step for step in module.steps if step.pipeline == "shardy"]
    assert count == len(module.steps)
    assert [s.pass_name for s in stages] == STAGES
    assert {(s.ir, s.kind) for s in stages} == {("mlir", "stage")}
    first = module.steps.index(stages[0])
    # Right after the last step before the `shardy-xla` pass, right before the step after it.
    assert module.steps[first - 1].xla_step == 2
    assert module.steps[first + len(STAGES)].pass_name == "shardy-xla"
    assert [s.index for s in module.steps] == list(range(len(module.steps)))


def test_stages_without_per_pass_steps_follow_before_optimizations(tmp_path: Path) -> None:
    shutil.copytree(DUMP / "shardy", tmp_path / "shardy")
    shutil.copy(DUMP / "module_0010.jit_f.before_optimizations.txt", tmp_path)
    module = scan(tmp_path).modules[0]
    assert [s.pass_name for s in module.steps] == ["before_optimizations", *STAGES]


def test_stages_diff_against_each_other_and_their_predecessor() -> None:
    dump = scan(DUMP)
    module = dump.modules[0]
    before, after = find_step(module, "before_propagation"), find_step(module, "after_propagation")
    propagated = diff_steps(dump.root, before, after)
    assert not propagated.equal and propagated.added > 0
    what_it_did = diff_with_previous(dump.root, module, after.index)
    assert what_it_did is not None and not what_it_did[0].equal


def test_stages_are_never_executions_nor_hlo_steps() -> None:
    dump = scan(DUMP)
    jobs = triage_jobs(dump, InputSpec(fake_data=True))
    assert [job.module.key for job in jobs] == ["module_0010"]
    assert all(step.pipeline != "shardy" for step in dump.modules[0].ir_steps("hlo"))


def test_a_multi_device_module_says_why_it_has_no_snapshot(
        capsys: pytest.CaptureFixture[str]) -> None:
    dump = scan(DUMP)
    module = dump.modules[0]
    assert device_count(dump.root, module) == 8
    note = no_snapshot_note(dump.root, module)
    assert note is not None and "multi-device module (8 devices) has no snapshots" in note
    triaged = run_cli(capsys, "triage", DUMP, "--no-cache", "--jobs", "0")
    assert triaged.status == 5  # nothing to judge is no success
    assert "module_0010 (jit_f): a multi-device module (8 devices) has no snapshots" in \
        triaged.out and "--fake-data" in triaged.out
    replayed = run_cli(capsys, "replay", DUMP, "module_0010")
    assert replayed.status == 2
    assert "multi-device module (8 devices) has no snapshots" in replayed.err
    assert "Traceback" not in replayed.err


def test_a_one_device_module_gets_no_such_note(tmp_path: Path) -> None:
    text = (DUMP / "module_0010.jit_f.before_optimizations.txt").read_text()
    (tmp_path / "module_0001.jit_g.before_optimizations.txt").write_text(
        text.replace(", num_partitions=8", "", 1))
    dump = scan(tmp_path)
    assert device_count(dump.root, dump.modules[0]) == 1
    assert no_snapshot_note(dump.root, dump.modules[0]) is None

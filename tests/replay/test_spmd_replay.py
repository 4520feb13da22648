"""SPMD-partitioned programs (JAX 0.12 on 8 virtual CPU devices, `tests/data/sharded`): every
step replays on the global inputs, the last equals what XLA itself returned, and partitioner
bugs planted in a copy are found at their step by bisection."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.bisect import bisect_replay
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.compare import compare
from workbench.replay.judge.outcome import Kind
from workbench.replay.localize.culprit import localize_backend_steps
from workbench.replay.localize.result import Localization, LocalizeError
from workbench.replay.steps import open_replay

DATA = Path(__file__).resolve().parents[1] / "data" / "sharded"


def numbered(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern), key=lambda p: int(p.name.split(".")[-2]))


def inputs_of(folder: Path, program: str = "") -> list[Path]:
    return numbered(folder, f"{program or folder.name}.in.*.npy")


def backend_of(folder: Path) -> HloBackend:
    dump = scan(folder)
    backend = open_backend(dump.root, dump.modules[0])
    assert isinstance(backend, HloBackend)
    return backend


@pytest.mark.parametrize("program", ["shard_map_collectives", "tensor_parallel_mlp"])
def test_the_last_step_equals_real_xla_output(program: str) -> None:
    folder = DATA / program
    backend = backend_of(folder)
    partitioning = backend.partitioning()
    assert partitioning is not None and partitioning.num_partitions == 8
    last = backend.steps()[-1]
    assert last.pass_name == "cpu_after_optimizations"
    arguments = [np.load(p) for p in inputs_of(folder)]
    # the final program is the per-device one: its parameters have shard shapes
    entry = backend.load(last).entry
    assert [p.shape.dims for p in entry.parameters] != [a.shape for a in arguments]
    result = backend.evaluate(last, arguments)
    results = list(result) if isinstance(result, tuple) else [result]
    expected = [np.load(p) for p in numbered(folder, f"{program}.out.*.npy")]
    assert len(results) == len(expected)
    for want, got in zip(expected, results, strict=True):
        comparison = compare(want, got)
        assert comparison.ok, comparison


@pytest.mark.parametrize("program", ["shard_map_collectives", "tensor_parallel_mlp",
                                     "sharded_reduction"])
def test_every_step_replays_ok_on_fake_data(program: str) -> None:
    dump = scan(DATA / program)
    module = dump.modules[0]
    with open_replay(dump.root, module, spec=InputSpec(fake_data=True)) as replay:
        results = [replay.evaluate(position) for position in range(len(replay.steps))]
    assert [r.status for r in results if r.kind != Kind.OK] == []
    assert len(results) == len(module.ir_steps("hlo")) >= 11


def _plant_reduction(text: str) -> str:
    """The sum's all-reduce combines with multiply instead of add."""
    name = re.search(r"all-reduce\(%reduce[^)]*\).*?to_apply=%([\w.]+)", text).group(1)
    head = text.index(f"%{name} (")
    root = text.index("ROOT", head)
    return text[:root] + text[root:].replace(" add(", " multiply(", 1)


def _plant_groups(text: str) -> str:
    """The sum's all-reduce over two groups of four instead of all eight devices."""
    line = re.search(r".*= f32\[16\]\S* all-reduce\(.*", text).group()
    return text.replace(line, line.replace("replica_groups=mesh['i'=8] {'i'}",
                                           "replica_groups=[2,4]<=[8]"))


def _plant_groups_of_max(text: str) -> str:
    """The max's all-reduce over two groups of four: devices 0-3 may still hold the true max,
    so only the copies' disagreement shows the bug."""
    line = re.search(r".*= f32\[\]\S* all-reduce\(.*", text).group()
    return text.replace(line, line.replace("replica_groups=mesh['i'=8] {'i'}",
                                           "replica_groups=[2,4]<=[8]"))


def _plant_offset(text: str) -> str:
    """Devices 6 and 7 swap the offsets of their shards in the cumulative sum."""
    return text.replace("constant({0, 1, 2, 3, 4, 5, 6, 7})", "constant({0, 1, 2, 3, 4, 5, 7, 6})")


@pytest.mark.parametrize("plant", [_plant_reduction, _plant_groups, _plant_groups_of_max,
                                   _plant_offset],
                         ids=["reduction", "replica-groups", "replica-groups-of-max",
                              "shard-offset"])
@pytest.mark.parametrize("first", ["0005", "0008"])
def test_a_planted_partitioner_bug_is_named_at_its_step(
        tmp_path: Path, plant: Callable[[str], str], first: str) -> None:
    copy = tmp_path / "dump"
    shutil.copytree(DATA / "sharded_reduction", copy)
    planted = 0
    for file in sorted(copy.glob("*.txt")):
        number = file.name.split(".")[2]
        if number.isdigit() and number >= first:
            text = file.read_text()
            changed = plant(text)
            assert changed != text, file.name
            file.write_text(changed)
            planted += 1
    assert planted >= 3
    dump = scan(copy)
    module = dump.modules[0]
    spec = InputSpec(npy=tuple(inputs_of(copy, "sharded_reduction")))
    assert spec.npy
    with open_replay(dump.root, module, spec=spec) as replay:
        verdict = bisect_replay(replay)
    steps = len(module.ir_steps("hlo"))
    assert verdict.status == Kind.MISMATCH
    assert verdict.culprit is not None
    assert verdict.culprit.step.file.split(".")[2] == first
    assert verdict.evaluations <= math.ceil(math.log2(steps)) + 2


def _planted_copy(tmp_path: Path, plant: Callable[[str], str], first: str) -> Path:
    copy = tmp_path / "dump"
    shutil.copytree(DATA / "sharded_reduction", copy)
    for file in sorted(copy.glob("*.txt")):
        number = file.name.split(".")[2]
        if number.isdigit() and number >= first:
            file.write_text(plant(file.read_text()))
    return copy


def _localize(folder: Path, before: int, after: int) -> Localization:
    backend = backend_of(folder)
    steps = {s.xla_step: s for s in backend.steps()}
    arguments = [np.load(p) for p in inputs_of(folder, "sharded_reduction")]
    return localize_backend_steps(backend, steps[before], steps[after], arguments)


def test_localization_names_the_collective_and_every_partition_it_departs_on(
        tmp_path: Path) -> None:
    result = _localize(_planted_copy(tmp_path, _plant_reduction, "0008"), 7, 8)
    assert result.instruction is not None
    assert (result.instruction.opcode, result.instruction.op_name) == ("all-reduce",
                                                                       "jit(f)/reduce_sum")
    assert result.partitions == tuple(range(8))
    assert "on partition(s) 0, 1, 2, 3, 4, 5, 6, 7" in result.summary


def test_localization_says_which_partitions_a_changed_offset_reaches(tmp_path: Path) -> None:
    result = _localize(_planted_copy(tmp_path, _plant_offset, "0008"), 7, 8)
    # the changed offset table is a constant with no counterpart: no single instruction, but
    # only the two devices whose offsets were swapped depart
    assert result.instruction is None
    assert result.partitions == (6, 7)
    assert "constant" in result.explanation


def test_unchanged_per_device_steps_localize_to_nothing() -> None:
    result = _localize(DATA / "sharded_reduction", 7, 8)
    assert result.instruction is None and result.partitions == ()


def test_the_partitioner_step_itself_is_not_localized_instruction_by_instruction() -> None:
    with pytest.raises(LocalizeError, match="either side of the SPMD partitioner"):
        _localize(DATA / "sharded_reduction", 4, 5)


def test_triage_localize_names_the_partitions_it_departs_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    folder = _planted_copy(tmp_path, _plant_reduction, "0008")
    command = ["triage", str(folder), "--jobs", "0", "--no-cache", "--localize", "--fake-data"]
    assert main(command) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "instruction:" in line]
    assert len(lines) == 1
    assert "(all-reduce, jit(f)/reduce_sum)" in lines[0]
    assert "(multiply, was add)" in lines[0] and "its reducer)" in lines[0]  # the plant
    assert lines[0].endswith(" on partition(s) 0, 1, 2, 3, 4, 5, 6, 7")
    assert main([*command, "--json"]) == 1
    (job,) = json.loads(capsys.readouterr().out)["results"]
    assert job["culprit"]["instruction"]["partitions"] == list(range(8))

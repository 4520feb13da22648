"""Proto-only dumps of sharded programs (`--xla_dump_hlo_as_proto` without text,
`tests/data/sharded_proto`): the proto reader carries the device counts, every form of replica
groups and Shardy's shardings as the text does, so such a dump replays as its text does."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend
from workbench.replay.hlo.sharding import Sharding, parse_replica_groups, parse_sharding
from workbench.replay.inputs import InputSpec
from workbench.replay.judge.compare import compare
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import open_replay

DATA = Path(__file__).resolve().parents[1] / "data"
PROGRAMS = ["shard_map_collectives", "tensor_parallel_mlp"]


def _numbered(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern), key=lambda p: int(p.name.split(".")[-2]))


def _backend(folder: Path) -> HloBackend:
    dump = scan(folder)
    backend = open_backend(dump.root, dump.modules[0])
    assert isinstance(backend, HloBackend)
    return backend


def _step_pairs(program: str) -> list[tuple[Path, Path]]:
    protos = sorted((DATA / "sharded_proto" / program).glob("*.hlo.pb"))
    assert len(protos) == 11
    return [(p, DATA / "sharded" / program / p.name.replace(".hlo.pb", ".txt")) for p in protos]


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_proto_reads_as_the_text_prints(program: str) -> None:
    forms: set[str] = set()
    for proto_file, text_file in _step_pairs(program):
        proto = read_hlo_proto(proto_file.read_bytes(), str(proto_file))
        text = parse_hlo_text(text_file.read_text(), str(text_file))
        assert proto.attributes.get("num_partitions") == text.attributes["num_partitions"] == "8"
        assert proto.attributes.get("replica_count") == text.attributes.get("replica_count")
        printed = {(c.name, i.name): i for c in text.computations for i in c.instructions}
        for computation in proto.computations:
            for instruction in computation.instructions:
                other = printed.get((computation.name, instruction.name))
                if other is None:  # a tuple element the text prints as `%x#0`
                    continue
                assert instruction.sharding == other.sharding, instruction.name
                groups = instruction.attrs.get("replica_groups")
                assert groups == other.attrs.get("replica_groups"), instruction.name
                if groups is not None:
                    parse_replica_groups(groups)
                    forms.add("mesh" if groups.startswith("mesh") else groups[0])
                if instruction.sharding is not None:
                    parse_sharding(instruction.sharding)
                    if "mesh[" in instruction.sharding:
                        forms.add("shardy")
    # the forms the old reader lost are all in these dumps
    expected = {
        "shard_map_collectives": {"mesh", "shardy"},
        "tensor_parallel_mlp": {"[", "shardy"},
    }[program]
    assert expected <= forms


def _same(a: Sharding | None, b: Sharding | None) -> bool:
    if a is None or b is None:
        return a is b
    return (
        (a.kind, a.replicate_last, a.device, len(a.elements))
        == (b.kind, b.replicate_last, b.device, len(b.elements))
        and np.array_equal(a.tiles, b.tiles)
        and all(_same(x, y) for x, y in zip(a.elements, b.elements, strict=True))
    )


def _proto_only_copy(tmp_path: Path, program: str) -> Path:
    folder = tmp_path / program
    shutil.copytree(DATA / "sharded_proto" / program, folder)
    for array in (DATA / "sharded" / program).glob("*.npy"):
        shutil.copy(array, folder)
    assert not list(folder.glob("*.txt"))
    return folder


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_proto_only_dump_replays_as_its_text(tmp_path: Path, program: str) -> None:
    folder = _proto_only_copy(tmp_path, program)
    proto, text = _backend(folder), _backend(DATA / "sharded" / program)
    ours, theirs = proto.partitioning(), text.partitioning()
    assert ours is not None and theirs is not None
    assert (ours.num_partitions, ours.replica_count) == (theirs.num_partitions, 1)
    assert ours.parameters is not None and theirs.parameters is not None
    for a, b in zip(
        (*ours.parameters, ours.result), (*theirs.parameters, theirs.result), strict=True
    ):
        assert _same(a, b)
    arguments = [np.load(p) for p in _numbered(folder, f"{program}.in.*.npy")]
    expected = [np.load(p) for p in _numbered(folder, f"{program}.out.*.npy")]
    for proto_step, text_step in zip(proto.steps(), text.steps(), strict=True):
        assert proto_step.text is None and proto_step.proto is not None
        from_proto = proto.evaluate(proto_step, arguments)
        from_text = text.evaluate(text_step, arguments)
        got = list(from_proto) if isinstance(from_proto, tuple) else [from_proto]
        want = list(from_text) if isinstance(from_text, tuple) else [from_text]
        assert len(got) == len(want) == len(expected), proto_step.label
        for a, b, real in zip(got, want, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=proto_step.label)
            assert compare(real, np.asarray(a)).ok, proto_step.label


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_proto_step_replays_ok_on_fake_data(tmp_path: Path, program: str) -> None:
    dump = scan(_proto_only_copy(tmp_path, program))
    with open_replay(dump.root, dump.modules[0], spec=InputSpec(fake_data=True)) as replay:
        results = [replay.evaluate(position) for position in range(len(replay.steps))]
    assert len(results) == 11
    assert [r.status for r in results if r.kind != Kind.OK] == []


def test_a_replicated_sharding_over_a_mesh_without_axes_reads_as_the_text_prints() -> None:
    """`{mesh[], replicated}` (JAX 0.12.0.1's replicated parameters after Shardy's export):
    from the proto as from the text, and replicated."""
    folder = DATA / "sharded_proto" / "empty_mesh"
    (proto_file,) = folder.glob("*.hlo.pb")
    proto = read_hlo_proto(proto_file.read_bytes(), str(proto_file))
    text = parse_hlo_text(proto_file.with_name(proto_file.name.replace(".hlo.pb", ".txt"))
                          .read_text())
    shardings = {i.name: i.sharding for c in text.computations for i in c.instructions}
    empty = [i for c in proto.computations for i in c.instructions
             if i.sharding == "{mesh[], replicated}"]
    assert [i.name for i in empty] == ["params_0_.0", "params_1_.0"]
    for instruction in empty:
        assert shardings[instruction.name] == instruction.sharding
        assert parse_sharding(instruction.sharding).kind == "replicated"

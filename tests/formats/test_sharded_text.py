"""Sharded JAX 0.12 dumps (`tests/data/sharded`): the text parser keeps mesh-based replica
groups whole, and the dumps read without problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.check import check_dump
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan

SHARDED = Path(__file__).parent.parent / "data" / "sharded"


def test_mesh_replica_groups_are_one_attribute() -> None:
    text = """HloModule m, num_partitions=8
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %r = f32[4] all-reduce(%x), channel_id=2, replica_groups=mesh['data'=4,'model'=2] {'data'}, use_global_device_ids=true, to_apply=%add
}
"""  # noqa: E501 (one instruction as XLA prints it)
    module = parse_hlo_text(text)
    assert module.attributes["num_partitions"] == "8"
    attrs = module.entry.root.attrs
    assert attrs["replica_groups"] == "mesh['data'=4,'model'=2] {'data'}"
    assert attrs["use_global_device_ids"] == "true"
    assert module.entry.root.called_computations == ["add"]


@pytest.mark.parametrize("program", ["shard_map_collectives", "tensor_parallel_mlp",
                                     "sharded_reduction"])
def test_sharded_dumps_read_without_problems(program: str) -> None:
    dump = scan(SHARDED / program)
    assert check_dump(dump) == [] and dump.problems == []
    (module,) = dump.modules
    assert len(module.ir_steps("hlo")) >= 11

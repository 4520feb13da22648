"""Collectives over several devices, each device its own interpreter (`partitioned.run_devices`);
expected values computed here from XLA's definitions."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.hlo.partitioned import evaluate_partitioned, run_devices
from workbench.replay.hlo.sharding import parse_sharding
from workbench.replay.hlo.spmd import Partitioning
from workbench.replay.processes import memory

ADD = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


def module(body: str, parameter: str = "f32[4]", partitions: int = 4):
    return parse_hlo_text(f"HloModule m, num_partitions={partitions}\n{ADD}\n"
                          f"ENTRY %e (x: {parameter}) -> f32[] {{\n"
                          f"  %x = {parameter} parameter(0)\n{body}\n}}\n")


def per_device(count: int = 4, size: int = 4) -> list[list[np.ndarray]]:
    return [[np.arange(size, dtype=np.float32) + 10 * d] for d in range(count)]


def run(body: str, **kwargs) -> list:
    inputs = kwargs.pop("inputs", per_device())
    return run_devices(module(body, **kwargs), inputs, kwargs.get("partitions", 4), 1)


def test_all_reduce_over_explicit_and_iota_groups() -> None:
    x = per_device()
    for groups in ("{{0,1},{2,3}}", "[2,2]<=[4]"):
        out = run("  ROOT %r = f32[4] all-reduce(%x), channel_id=1, replica_groups="
                  f"{groups}, use_global_device_ids=true, to_apply=%add")
        np.testing.assert_array_equal(out[1], x[0][0] + x[1][0])
        np.testing.assert_array_equal(out[2], x[2][0] + x[3][0])
    transposed = run("  ROOT %r = f32[4] all-reduce(%x), channel_id=1, "
                     "replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, "
                     "to_apply=%add")
    np.testing.assert_array_equal(transposed[1], x[1][0] + x[3][0])


def test_empty_groups_without_a_channel_are_each_partition_alone() -> None:
    # no channel_id: groups are replicas, and there is one replica
    out = run("  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, to_apply=%add")
    np.testing.assert_array_equal(out[2], per_device()[2][0])
    # a channel: groups are partitions; {} is all of them
    out = run("  ROOT %r = f32[4] all-reduce(%x), channel_id=1, replica_groups={}, "
              "to_apply=%add")
    np.testing.assert_array_equal(out[2], sum(v[0] for v in per_device()))


def test_all_gather_reduce_scatter_all_to_all_in_group_order() -> None:
    x = [v[0] for v in per_device()]
    gathered = run("  ROOT %r = f32[8] all-gather(%x), channel_id=1, replica_groups={{3,1},"
                   "{0,2}}, dimensions={0}, use_global_device_ids=true")
    np.testing.assert_array_equal(gathered[1], np.concatenate([x[3], x[1]]))
    scattered = run("  ROOT %r = f32[1] reduce-scatter(%x), channel_id=1, replica_groups={}, "
                    "dimensions={0}, to_apply=%add")
    np.testing.assert_array_equal(scattered[2], [sum(v[2] for v in x)])
    swapped = run("  ROOT %r = f32[4] all-to-all(%x), channel_id=1, replica_groups={}, "
                  "dimensions={0}")
    # device d receives chunk d of every device, in group order
    np.testing.assert_array_equal(swapped[1], [v[1] for v in x])


def test_collective_permute_broadcast_and_device_ids() -> None:
    x = [v[0] for v in per_device()]
    permuted = run("  ROOT %r = f32[4] collective-permute(%x), channel_id=1, "
                   "source_target_pairs={{0,1},{1,2},{2,0}}")
    np.testing.assert_array_equal(permuted[1], x[0])
    np.testing.assert_array_equal(permuted[3], np.zeros(4))  # no one sends to 3
    broadcast = run("  ROOT %r = f32[4] collective-broadcast(%x), channel_id=1, "
                    "replica_groups={{2,3},{1,0}}")
    np.testing.assert_array_equal(broadcast[3], x[2])
    np.testing.assert_array_equal(broadcast[0], x[1])
    ids = run("  ROOT %p = u32[] partition-id()")
    assert [int(i) for i in ids] == [0, 1, 2, 3]


def test_async_forms_give_what_the_sync_forms_give() -> None:
    x = [v[0] for v in per_device()]
    reduced = run("  %s = f32[4] all-reduce-start(%x), channel_id=1, replica_groups={}, "
                  "to_apply=%add\n  ROOT %r = f32[4] all-reduce-done(%s)")
    np.testing.assert_array_equal(reduced[0], sum(x))
    gathered = run("  %s = (f32[4], f32[16]) all-gather-start(%x), channel_id=1, "
                   "replica_groups={}, dimensions={0}\n"
                   "  ROOT %r = f32[16] all-gather-done(%s)")
    np.testing.assert_array_equal(gathered[3], np.concatenate(x))
    permuted = run("  %s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(%x), "
                   "channel_id=1, source_target_pairs={{3,0}}\n"
                   "  ROOT %r = f32[4] collective-permute-done(%s)")
    np.testing.assert_array_equal(permuted[0], x[3])


def test_a_collective_inside_a_loop_meets_once_per_iteration() -> None:
    text = f"""HloModule m, num_partitions=2
{ADD}
%cond (s: (s32[], f32[2])) -> pred[] {{
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %c = pred[] compare(%i, %n), direction=LT
}}
%body (s: (s32[], f32[2])) -> (s32[], f32[2]) {{
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[2] get-tuple-element(%s), index=1
  %r = f32[2] all-reduce(%v), channel_id=1, replica_groups={{}}, to_apply=%add
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[2]) tuple(%j, %r)
}}
ENTRY %e (x: f32[2]) -> f32[2] {{
  %x = f32[2] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[2]) tuple(%zero, %x)
  %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[2] get-tuple-element(%w), index=1
}}
"""
    inputs = [[np.array([1, 2], np.float32)], [np.array([3, 4], np.float32)]]
    out = run_devices(parse_hlo_text(text), inputs, 2, 1)
    # each iteration doubles the sum: (1+3, 2+4) -> x2 -> x2
    np.testing.assert_array_equal(out[1], [16, 24])


def test_one_device_alone_cannot_answer_a_group_of_several() -> None:
    with pytest.raises(Unsupported, match="all-gather over more than one device"):
        evaluate_module(module("  ROOT %r = f32[8] all-gather(%x), channel_id=1, "
                               "replica_groups={{0,1}}, dimensions={0}"),
                        [np.zeros(4, np.float32)])


def test_a_failing_device_stops_the_others_with_its_own_error() -> None:
    # device 1 gets an argument of the wrong shape: the others must not wait forever
    inputs = per_device()
    inputs[1] = [np.zeros(5, np.float32)]
    with pytest.raises(EvaluationError, match="argument 0"):
        run("  ROOT %r = f32[4] all-reduce(%x), channel_id=1, replica_groups={}, "
            "to_apply=%add", inputs=inputs)


def test_the_memory_estimate_counts_every_device(monkeypatch: pytest.MonkeyPatch) -> None:
    hlo = module("  ROOT %r = f32[1024] all-reduce(%x), channel_id=1, replica_groups={}, "
                 "to_apply=%add", parameter="f32[1024]")
    one_device = Interpreter(hlo).holds_at_once(hlo.entry.name)
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, str(2 * one_device))
    inputs = [[np.zeros(1024, np.float32)] for _ in range(4)]
    with pytest.raises(memory.OverMemoryLimit, match="the values 4 devices hold at once"):
        run_devices(hlo, inputs, 4, 1)
    assert len(run_devices(hlo, inputs[:2], 2, 1)) == 2  # two devices fit


def test_a_per_device_step_runs_on_shards_and_joins_by_the_output_sharding() -> None:
    # x: f32[8] cut in 4 along dim 0; each device doubles its shard and adds its partition id;
    # with no output sharding known the root is replicated: here an all-gather makes it so
    per_device = parse_hlo_text("""HloModule m, num_partitions=4
ENTRY %e (x: f32[2]) -> f32[8] {
  %x = f32[2] parameter(0)
  %p = u32[] partition-id()
  %f = f32[] convert(%p)
  %b = f32[2] broadcast(%f), dimensions={}
  %y = f32[2] add(%x, %b)
  ROOT %g = f32[8] all-gather(%y), channel_id=1, replica_groups={}, dimensions={0}
}
""")
    x = np.arange(8, dtype=np.float32)
    partitioning = Partitioning(4, 1, (parse_sharding("{devices=[4]<=[4]}"),), None)
    result = evaluate_partitioned(per_device, [x], partitioning, Shape("f32", (8,)))
    np.testing.assert_array_equal(result, x + np.repeat(np.arange(4), 2))
    tiled = Partitioning(4, 1, partitioning.parameters, parse_sharding("{devices=[4]<=[4]}"))
    with pytest.raises(EvaluationError, match=r"device 0 holds \[8\], but its shard .* is \[2\]"):
        evaluate_partitioned(per_device, [x], tiled, Shape("f32", (8,)))

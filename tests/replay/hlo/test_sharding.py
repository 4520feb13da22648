"""Shardings and replica groups in every form XLA prints, and the shards they cut."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.replay.errors import Unsupported
from workbench.replay.hlo.sharding import (
    CopiesDisagree,
    join_shards,
    parse_pairs,
    parse_replica_groups,
    parse_sharding,
    shard_of,
    shard_shape,
)


def test_iota_device_lists_with_and_without_transpose() -> None:
    plain = parse_sharding("{devices=[4,1,2]<=[8]}")
    assert plain.tiles.tolist() == [[[0, 1]], [[2, 3]], [[4, 5]], [[6, 7]]]
    transposed = parse_sharding("{devices=[2,4]<=[4,2]T(1,0)}")
    assert transposed.tiles.tolist() == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_explicit_devices_and_last_tile_dim_replicate() -> None:
    sharding = parse_sharding("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}")
    assert sharding.replicate_last and sharding.tile_dims == (2, 1)
    assert sharding.tile_of(2) == (0, 0) and sharding.tile_of(1) == (1, 0)


def test_kinds_and_tuples() -> None:
    assert parse_sharding("{replicated}").kind == "replicated"
    assert parse_sharding("{manual}").kind == "manual"
    maximal = parse_sharding("{maximal device=3}")
    assert (maximal.kind, maximal.device) == ("maximal", 3)
    pair = parse_sharding("{{replicated}, {devices=[2]0,1}}")
    assert [e.kind for e in pair.elements] == ["replicated", "tiled"]


def test_shardy_mesh_form_maps_axes_to_dimensions() -> None:
    # data=4 x model=2, device = data * 2 + model; dim 1 over 'model', 'data' replicated
    sharding = parse_sharding("{mesh['data'=4,'model'=2], [{}, {'model'}]}")
    assert sharding.tile_dims == (1, 2) and sharding.replicate_last
    assert sharding.tile_of(5) == (0, 1) and sharding.tile_of(4) == (0, 0)
    assert parse_sharding("{mesh['i'=8], manual}").kind == "manual"


def test_replica_groups_in_the_three_forms() -> None:
    assert parse_replica_groups("{{0,1},{2,3}}") == [[0, 1], [2, 3]]
    assert parse_replica_groups("{}") == []
    assert parse_replica_groups("[2,4]<=[4,2]T(1,0)") == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert parse_replica_groups("[4,2]<=[8]") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # devices that differ only along 'data' form a group
    assert parse_replica_groups("mesh['data'=4,'model'=2] {'data'}") == [[0, 2, 4, 6],
                                                                         [1, 3, 5, 7]]
    assert parse_pairs("{{0,1},{1,0}}") == [(0, 1), (1, 0)]


def test_unknown_forms_are_unsupported_not_guessed() -> None:
    with pytest.raises(Unsupported, match="sharding"):
        parse_sharding("{devices=[2]0,1 unknown_flag}")
    with pytest.raises(Unsupported, match="replica groups"):
        parse_replica_groups("groups(0,1)")


def test_uneven_shards_are_padded_and_joined_back() -> None:
    sharding = parse_sharding("{devices=[4,1]<=[4]}")
    value = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
    assert shard_shape(sharding, value.shape) == (3, 3)
    shards = {d: shard_of(sharding, value, d) for d in range(4)}
    assert shards[3].shape == (3, 3) and not shards[3][1:].any()  # 1 real row, 2 of padding
    np.testing.assert_array_equal(join_shards(sharding, shards, value.shape), value)


def test_copies_of_one_part_that_disagree_read_as_nan_not_as_one_pick() -> None:
    value = np.arange(4, dtype=np.float32)
    wrong = value + np.array([0, 0, 3, 0], np.float32)
    joined = join_shards(parse_sharding("{replicated}"), {0: value, 1: value, 2: wrong}, (4,))
    np.testing.assert_array_equal(joined, [0, 1, np.nan, 3])
    halves = parse_sharding("{devices=[2,2]0,1,2,3 last_tile_dim_replicate}")
    shards = {d: shard_of(halves, value, d) for d in range(4)}
    np.testing.assert_array_equal(join_shards(halves, shards, (4,)), value)
    shards[3] = shards[3] + np.array([0, 1], np.float32)
    np.testing.assert_array_equal(join_shards(halves, shards, (4,)), [0, 1, 2, np.nan])
    integers = {0: np.arange(4), 1: np.arange(4) * 2}
    with pytest.raises(CopiesDisagree, match="devices 0 and 1 .*3 of 4 elements"):
        join_shards(parse_sharding("{replicated}"), integers, (4,))

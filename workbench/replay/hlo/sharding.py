"""HLO shardings and replica groups as XLA prints them, and the shards they make.

A sharding says which part of a global array each device holds. Every printed form becomes a
`Sharding`: a tile assignment (device ids laid out over the tiled dimensions, plus one
trailing dimension of devices holding copies when `last_tile_dim_replicate`), or replicated,
maximal (one device holds all), manual (each device holds its own value), or a tuple of those.
Printed forms read: `{replicated}`, `{maximal device=3}`, `{manual}`,
`{devices=[2,1,4]0,1,...,7 last_tile_dim_replicate}`, iota device lists
`{devices=[4,1,2]<=[8]}` and `{devices=[2,4]<=[4,2]T(1,0)}`, Shardy's mesh form
`{mesh['data'=4,'model'=2], [{'data'}, {}]}`, and tuples `{{replicated}, {manual}}`.

Replica groups read the same way: explicit `{{0,1},{2,3}}`, iota `[2,4]<=[4,2]T(1,0)` (rows
are groups), and mesh-based `mesh['data'=4,'model'=2] {'data'}` (devices that differ only
along the named axes form a group, in mesh order).

An uneven dimension is cut into ceil(size / tiles) pieces per tile, the last ones padded, as
XLA's SPMD partitioner does; padding reads as zeros and is dropped when shards are joined.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from workbench.replay.errors import EvaluationError, Unsupported


@dataclass(frozen=True)
class Sharding:
    """One array's sharding (or a tuple's, in `elements`). `tiles` holds device ids; its
    first `rank` dimensions tile the array, and with `replicate_last` one more dimension
    lists the devices that hold the same tile."""

    kind: str  # "tiled", "replicated", "maximal", "manual", "tuple"
    tiles: np.ndarray | None = None
    replicate_last: bool = False
    device: int = 0  # of a maximal sharding
    elements: tuple[Sharding, ...] = ()

    def tile_of(self, device: int) -> tuple[int, ...] | None:
        """The tile index `device` holds (over the tiled dimensions); None if it holds none."""
        assert self.tiles is not None
        found = np.argwhere(self.tiles == device)
        if not len(found):
            return None
        index = tuple(int(i) for i in found[0])
        return index[:-1] if self.replicate_last else index

    @property
    def tile_dims(self) -> tuple[int, ...]:
        assert self.tiles is not None
        dims = self.tiles.shape
        return dims[:-1] if self.replicate_last else dims


class ShardingError(Unsupported):
    """A sharding or replica-group form this reader does not know."""


def _iota(dims: list[int], reshape: list[int], perm: list[int] | None) -> np.ndarray:
    devices = np.arange(math.prod(reshape)).reshape(reshape)
    if perm is not None:
        devices = devices.transpose(perm)
    return devices.reshape(dims)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


_MESH = re.compile(r"mesh\[([^\]]*)\]")
_AXIS = re.compile(r"'([^']+)'\s*=\s*(\d+)")


def _mesh(text: str) -> tuple[list[str], list[int]]:
    match = _MESH.match(text.strip())
    if match is None:
        raise ShardingError(f"mesh {text!r}")
    axes = _AXIS.findall(match.group(1))
    if not axes and match.group(1).strip():
        raise ShardingError(f"mesh {text!r}")
    return [name for name, _ in axes], [int(size) for _, size in axes]


def _split_top(text: str) -> list[str]:
    """`a, {b, c}, d` -> [`a`, `{b, c}`, `d`] (commas outside brackets)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _named_axes(text: str) -> list[str]:
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ShardingError(f"dimension sharding {text!r}")
    names = [part.strip() for part in text[1:-1].split(",") if part.strip()]
    if any(not re.fullmatch(r"'[^']+'", name) for name in names):
        raise ShardingError(f"dimension sharding {text!r} (sub-axes or open dimensions)")
    return [name.strip("'") for name in names]


def _mesh_sharding(body: str) -> Sharding:
    head, _, rest = body.partition("]")
    names, sizes = _mesh(head + "]")
    rest = rest.strip().lstrip(",").strip()
    if rest in ("replicated", ""):
        return Sharding("replicated")
    if rest == "manual":
        return Sharding("manual")
    if rest.startswith("maximal"):
        return Sharding("maximal", device=int(rest.split("=")[-1]))
    if not (rest.startswith("[") and rest.endswith("]")):
        raise ShardingError(f"sharding {{{body}}}")
    per_dim = [_named_axes(part) for part in _split_top(rest[1:-1])]
    used = [name for axes in per_dim for name in axes]
    if any(name not in names for name in used) or len(set(used)) != len(used):
        raise ShardingError(f"sharding {{{body}}}")
    unused = [name for name in names if name not in used]
    devices = np.arange(math.prod(sizes)).reshape(sizes)
    order = [names.index(name) for name in used + unused]
    devices = devices.transpose(order)
    dims = [math.prod(sizes[names.index(n)] for n in axes) for axes in per_dim]
    if unused:
        dims.append(math.prod(sizes[names.index(n)] for n in unused))
    return Sharding("tiled", devices.reshape(dims), replicate_last=bool(unused))


_DEVICES = re.compile(r"devices=\[([\d,]*)\]\s*(<=\[([\d,]*)\](?:T\(([\d,]*)\))?|[\d,]+)")


def parse_sharding(text: str) -> Sharding:
    """A printed sharding (`{...}`); raises ShardingError for a form it does not know."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ShardingError(f"sharding {text!r}")
    body = text[1:-1].strip()
    if body.startswith("{") or body == "":
        return Sharding("tuple", elements=tuple(parse_sharding(p) for p in _split_top(body)))
    if body.startswith("mesh["):
        return _mesh_sharding(body)
    words = body.split()
    if words[0] in ("replicated", "manual"):
        return Sharding(words[0])
    if words[0] == "maximal":
        match = re.search(r"device=(\d+)", body)
        if match is None:
            raise ShardingError(f"sharding {text!r}")
        return Sharding("maximal", device=int(match.group(1)))
    match = _DEVICES.match(body)
    if match is None:
        raise ShardingError(f"sharding {text!r}")
    dims = _ints(match.group(1))
    if match.group(3) is not None:
        perm = _ints(match.group(4)) if match.group(4) is not None else None
        tiles = _iota(dims, _ints(match.group(3)), perm)
    else:
        tiles = np.array(_ints(match.group(2))).reshape(dims)
    extra = body[match.end() :].strip()
    if extra not in ("", "last_tile_dim_replicate"):
        raise ShardingError(f"sharding {text!r} ({extra})")
    return Sharding("tiled", tiles, replicate_last=extra == "last_tile_dim_replicate")


def parse_replica_groups(text: str) -> list[list[int]]:
    """Replica groups in any printed form; [] for `{}` (every participant in one group)."""
    text = text.strip()
    if text.startswith("mesh["):
        head, _, rest = text.partition("]")
        names, sizes = _mesh(head + "]")
        axes = _named_axes(rest.strip())
        if any(name not in names for name in axes):
            raise ShardingError(f"replica groups {text!r}")
        others = [name for name in names if name not in axes]
        devices = np.arange(math.prod(sizes)).reshape(sizes)
        devices = devices.transpose([names.index(n) for n in others + axes])
        return devices.reshape(-1, math.prod(sizes[names.index(n)] for n in axes)).tolist()
    iota = re.fullmatch(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text.replace(" ", ""))
    if iota is not None:
        dims = _ints(iota.group(1))
        perm = _ints(iota.group(3)) if iota.group(3) else None
        return _iota(dims, _ints(iota.group(2)), perm).tolist()
    compact = text.replace(" ", "")
    if not re.fullmatch(r"\{(\{[\d,]*\},?)*\}", compact):
        raise ShardingError(f"replica groups {text!r}")
    return [_ints(group) for group in re.findall(r"\{([\d,]*)\}", compact[1:-1])]


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """`source_target_pairs={{0,1},{1,2}}`."""
    groups = parse_replica_groups(text)
    if any(len(pair) != 2 for pair in groups):
        raise ShardingError(f"source_target_pairs {text!r}")
    return [(pair[0], pair[1]) for pair in groups]


# -- shards -------------------------------------------------------------------------------


def shard_shape(sharding: Sharding, dims: tuple[int, ...]) -> tuple[int, ...]:
    """The per-device shape of a global array of `dims` (uneven dimensions padded)."""
    if sharding.kind != "tiled":
        return dims
    tile_dims = sharding.tile_dims
    if len(tile_dims) != len(dims):
        raise ShardingError(f"a sharding over {len(tile_dims)} dimensions on rank {len(dims)}")
    return tuple(-(-size // count) for size, count in zip(dims, tile_dims, strict=True))


def shard_of(sharding: Sharding, value: np.ndarray, device: int) -> np.ndarray:
    """The part of global `value` that `device` holds (zero-padded to the shard shape)."""
    if sharding.kind in ("replicated", "manual"):
        return value
    if sharding.kind == "maximal":
        return value  # the holder's copy; other devices' is not read
    if sharding.kind != "tiled":
        raise ShardingError(f"a {sharding.kind} sharding on an array")
    tile = sharding.tile_of(device)
    if tile is None:
        raise ShardingError(f"device {device} is not in the sharding")
    shape = shard_shape(sharding, value.shape)
    slices = tuple(
        slice(index * size, (index + 1) * size) for index, size in zip(tile, shape, strict=True)
    )
    part = value[slices]
    if part.shape != shape:
        part = np.pad(
            part, [(0, want - have) for have, want in zip(part.shape, shape, strict=True)]
        )
    return part


def join_shards(
    sharding: Sharding, shards: dict[int, np.ndarray], dims: tuple[int, ...]
) -> np.ndarray:
    """The global array of `dims` from every device's shard (padding dropped).

    Devices holding copies of one part (replicated, `last_tile_dim_replicate`) must agree:
    the same program on the same values computes the same bits. Where float copies differ
    the value is undefined and reads as NaN (so the step mismatches, at those elements);
    other types raise `CopiesDisagree`."""
    if sharding.kind == "manual":
        return shards[min(shards)]
    if sharding.kind == "maximal":
        return shards[sharding.device]
    if sharding.kind == "replicated":
        first = min(shards)
        joined = shards[first]
        for device, copy in shards.items():
            joined = _agreed(joined, copy, first, device)
        return joined
    if sharding.kind != "tiled":
        raise ShardingError(f"a {sharding.kind} sharding on an array")
    shape = shard_shape(sharding, dims)
    result = np.zeros(dims, next(iter(shards.values())).dtype)
    holders: dict[tuple[int, ...], int] = {}
    for device, part in sorted(shards.items()):
        tile = sharding.tile_of(device)
        if tile is None:
            continue
        if part.shape != shape:
            raise EvaluationError(
                f"device {device} holds {list(part.shape)}, but its shard of {list(dims)} "
                f"is {list(shape)}"
            )
        slices = tuple(
            slice(index * size, min((index + 1) * size, total))
            for index, size, total in zip(tile, shape, dims, strict=True)
        )
        piece = part[tuple(slice(0, s.stop - s.start) for s in slices)]
        if tile in holders:
            piece = _agreed(result[slices], piece, holders[tile], device)
        holders.setdefault(tile, device)
        result[slices] = piece
    return result


class CopiesDisagree(EvaluationError):
    """Devices that must hold the same part of a result hold different integer values."""


def _agreed(first: np.ndarray, other: np.ndarray, first_device: int, device: int) -> np.ndarray:
    """`first` where the copies agree; NaN where float copies differ."""
    floating = first.dtype.kind in "fc"
    differ = first != other
    if floating:
        differ &= ~(np.isnan(first) & np.isnan(other))
    if not differ.any():
        return first
    if not floating:
        raise CopiesDisagree(
            f"devices {first_device} and {device} hold different copies of the same part of "
            f"the result ({int(np.count_nonzero(differ))} of {first.size} elements)"
        )
    return np.where(differ, np.nan, first).astype(first.dtype)

"""HloProto reader: for every corpus step dumped both ways, it and the text parser agree."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from workbench.formats.hlo_proto import read_hlo_proto, sharding_text
from workbench.formats.literal import layout_extra
from workbench.hlo_ir import HloModule, Instruction, LiteralValue, Shape
from workbench.loader import ReadError
from workbench.protos import hlo_pb2, xla_data_pb2

# Typed fields both readers carry (everything but the literal, compared separately).
TYPED_FIELDS = (
    "opcode", "operands", "called_computations", "parameter_number", "tuple_index",
    "dimensions", "slice", "dynamic_slice_sizes", "window", "padding_config",
    "dot_dimension_numbers", "convolution_dimension_numbers", "gather_dimension_numbers",
    "gather_slice_sizes", "scatter_dimension_numbers", "operand_precision",
    "feature_group_count", "batch_group_count", "comparison_direction", "comparison_type",
    "fusion_kind", "custom_call_target", "backend_config", "sharding", "metadata",
    "exponent_bits", "mantissa_bits", "is_stable", "rng_algorithm", "distribution", "fft_type",
    "fft_length", "k", "largest",
)
LN = Path("xla/layernorm/module_0010.jit_ln.cpu_after_optimizations")


def shape_key(shape: Shape) -> tuple:
    """A shape for comparison; a rank-0 array's layout is `()` in the proto, absent in text."""
    layout = shape.layout if shape.dims else None
    return (shape.element_type, shape.dims, shape.dynamic, layout, shape.layout_extra,
            tuple(shape_key(s) for s in shape.tuple_shapes))


def same_literal(a: LiteralValue, b: LiteralValue) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_literal(x, y) for x, y in zip(a, b, strict=True)))
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    # Bit patterns: NaN == NaN (with its sign and payload) and -0.0 != 0.0.
    return a.tobytes() == b.tobytes()


def compare(text: HloModule, proto: HloModule, where: str) -> tuple[int, int]:
    """Assert the two readers agree; returns (instructions compared, constants compared)."""
    assert {c.name for c in text.computations} == {c.name for c in proto.computations}, where
    assert text.entry_name == proto.entry_name, where
    assert text.entry_computation_layout == proto.entry_computation_layout, where
    assert text.source == proto.source, where
    instructions = constants = 0
    for computation in text.computations:
        other = proto.by_name[computation.name]
        assert computation.root_name == other.root_name, where
        assert set(computation.by_name) == set(other.by_name), (where, computation.name)
        for instruction in computation.instructions:
            twin: Instruction = other.by_name[instruction.name]
            context = (where, instruction.name)
            assert shape_key(instruction.shape) == shape_key(twin.shape), context
            for name in TYPED_FIELDS:
                assert getattr(instruction, name) == getattr(twin, name), (*context, name)
            for key in instruction.attrs.keys() & twin.attrs.keys():
                assert instruction.attrs[key] == twin.attrs[key], (*context, key)
            if instruction.opcode == "constant":
                assert twin.literal is not None, context
                if not instruction.literal_elided:
                    assert same_literal(instruction.literal, twin.literal), context
                    constants += 1
            instructions += 1
    return instructions, constants


def test_text_and_proto_agree_on_the_whole_corpus(
        hlo_text_modules: dict[Path, HloModule]) -> None:
    pairs = instructions = constants = 0
    elided_with_values = 0
    for text_path, text_module in hlo_text_modules.items():
        proto_path = text_path.with_name(text_path.name[: -len(".txt")] + ".hlo.pb")
        if not proto_path.exists():
            continue
        proto_module = read_hlo_proto(proto_path.read_bytes(), str(proto_path))
        counted = compare(text_module, proto_module, text_path.name)
        instructions += counted[0]
        constants += counted[1]
        elided_with_values += sum(
            1 for c in text_module.computations for i in c.instructions if i.literal_elided)
        pairs += 1
    assert pairs == 1272
    assert instructions > 45_000
    assert constants > 5_000
    assert elided_with_values >= 10  # their values come from the proto only


def test_module_fields(corpus: Path) -> None:
    module = read_hlo_proto((corpus / f"{LN}.hlo.pb").read_bytes(), "ln.hlo.pb")
    assert module.name == "jit_ln"
    assert module.id is not None and module.id > 0
    assert module.attributes == {"is_scheduled": "true"}
    entry = module.entry
    assert entry.is_entry and entry.id is not None
    assert all(i.id is not None for i in entry.instructions)
    assert module.source.frame_location(9) == ("program.py", 4, "ln")


def test_bare_module_proto(corpus: Path) -> None:
    """An HloModuleProto on its own (as a snapshot embeds it) reads the same."""
    wrapper = hlo_pb2.HloProto.FromString((corpus / f"{LN}.hlo.pb").read_bytes())
    bare = read_hlo_proto(wrapper.hlo_module.SerializeToString(), "bare.pb")
    text = (corpus / f"{LN}.txt").read_text()
    from workbench.formats.hlo_text import parse_hlo_text

    compare(parse_hlo_text(text), bare, "bare")


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "truncated or damaged|not in the module|not defined"),
        (lambda data: b"\xff" * 64, "not an HloProto"),
        (lambda data: b"HloModule jit_ln, is_scheduled=true\n", "not an HloProto|no HLO module"),
        (lambda data: data[:3], "not an HloProto|no HLO module"),
    ],
)
def test_damaged_protos(corpus: Path, damage, reason: str) -> None:
    data = damage((corpus / f"{LN}.hlo.pb").read_bytes())
    with pytest.raises(ReadError, match=reason) as caught:
        read_hlo_proto(data, "bad.hlo.pb")
    assert caught.value.file == "bad.hlo.pb"


def test_dangling_ids(corpus: Path) -> None:
    proto = hlo_pb2.HloProto.FromString((corpus / f"{LN}.hlo.pb").read_bytes())
    proto.hlo_module.computations[-1].instructions[-1].operand_ids.append(999_999)
    with pytest.raises(ReadError, match="operand id 999999 is not defined"):
        read_hlo_proto(proto.SerializeToString(), "x.pb")
    proto = hlo_pb2.HloProto.FromString((corpus / f"{LN}.hlo.pb").read_bytes())
    proto.hlo_module.entry_computation_id = 424242
    proto.hlo_module.entry_computation_name = "gone"
    with pytest.raises(ReadError, match="entry computation id 424242"):
        read_hlo_proto(proto.SerializeToString(), "x.pb")


def test_duplicate_instruction_ids(corpus: Path) -> None:
    """Operands name instructions by id: two with one id would make an operand the wrong
    instruction. The error names the file and both instructions."""
    proto = hlo_pb2.HloProto.FromString((corpus / f"{LN}.hlo.pb").read_bytes())
    entry = next(c for c in proto.hlo_module.computations
                 if c.id == proto.hlo_module.entry_computation_id)
    first, second = entry.instructions[0], entry.instructions[1]
    second.id = first.id
    with pytest.raises(ReadError, match=f"{second.name}: its id {first.id} is also that of "
                                        f"{first.name}") as caught:
        read_hlo_proto(proto.SerializeToString(), "dup.hlo.pb")
    assert caught.value.file == "dup.hlo.pb"


def test_sharding_text() -> None:
    sharding = xla_data_pb2.OpSharding
    assert sharding_text(sharding(type=sharding.REPLICATED)) == "{replicated}"
    assert sharding_text(sharding(type=sharding.MAXIMAL, tile_assignment_devices=[3])) == \
        "{maximal device=3}"
    tiled = sharding(type=sharding.OTHER, tile_assignment_dimensions=[2, 1],
                     tile_assignment_devices=[0, 1])
    assert sharding_text(tiled) == "{devices=[2,1]0,1}"
    iota = sharding(type=sharding.OTHER, tile_assignment_dimensions=[2, 2],
                    iota_reshape_dims=[4], iota_transpose_perm=[0],
                    replicate_on_last_tile_dim=True)
    assert sharding_text(iota) == "{devices=[2,2]<=[4] last_tile_dim_replicate}"
    pair = sharding(type=sharding.TUPLE, tuple_shardings=[sharding(type=sharding.REPLICATED),
                                                          sharding(type=sharding.MANUAL)])
    assert sharding_text(pair) == "{{replicated}, {manual}}"
    # A named sharding (XLA's field 14, not in our subset) over a mesh without axes is what
    # XLA prints `{mesh[], replicated}` (tests/data/sharded_proto/empty_mesh)...
    named = sharding.FromString(b"\x72\x02\x12\x00")  # field 14, length 2: an empty mesh
    assert sharding_text(named) == "{mesh[], replicated}"
    # ...and one holding a field this reader does not know is not mistaken for "replicated".
    newer = sharding.FromString(b"\x72\x04\x12\x00\x48\x01")  # and field 9 = 1
    assert sharding_text(newer) == "{unrecognized sharding (fields 14)}"
    # Proto3 enums are open: a type this subset does not know (a newer XLA's) is named so.
    assert sharding_text(sharding(type=77)) == "{unknown_77}"
    assert sharding_text(sharding(type=sharding.OTHER, tile_assignment_dimensions=[2, 2],
                                  tile_assignment_devices=[0, 1, 2, 3],
                                  last_tile_dims=[sharding.MANUAL, 9])) == \
        "{devices=[2,2]0,1,2,3 last_tile_dims={manual, unknown_9}}"


def test_unknown_enum_value_in_a_module(corpus: Path) -> None:
    """The corpus's one sharded instruction with a sharding type from outside this subset
    (a newer XLA's, or a damaged byte): the module still reads."""
    path = corpus / "xla" / "mlp" / "module_0004.jit__normal.before_optimizations.hlo.pb"
    proto = hlo_pb2.HloProto.FromString(path.read_bytes())
    (sharded,) = [i for c in proto.hlo_module.computations for i in c.instructions
                  if i.HasField("sharding")]
    sharded.sharding.type = 77
    module = read_hlo_proto(proto.SerializeToString(), path.name)
    assert module.entry.by_name[sharded.name].sharding == "{unknown_77}"


def test_layout_extras() -> None:
    layout = xla_data_pb2.LayoutProto(minor_to_major=[1, 0], memory_space=1,
                                      element_size_in_bits=4)
    layout.tiles.add(dimensions=[8, 128])
    layout.tiles.add(dimensions=[2, 1])
    assert layout_extra(layout) == "T(8,128)(2,1)E(4)S(1)"
    assert layout_extra(xla_data_pb2.LayoutProto(minor_to_major=[0])) == ""


def test_constants_only_the_proto_has(hlo_text_modules: dict[Path, HloModule]) -> None:
    """Constants elided as `{...}` in text come with their values from the proto."""
    checked = 0
    for text_path, text in hlo_text_modules.items():
        elided = [(c.name, i) for c in text.computations for i in c.instructions
                  if i.literal_elided]
        proto_path = text_path.with_name(text_path.name[: -len(".txt")] + ".hlo.pb")
        if not elided or not proto_path.exists():
            continue
        proto = read_hlo_proto(proto_path.read_bytes(), str(proto_path))
        for computation, instruction in elided:
            value = proto.by_name[computation].by_name[instruction.name].literal
            assert isinstance(value, np.ndarray)
            assert value.shape == instruction.shape.dims and value.size > 10
            checked += 1
    assert checked >= 10


LARGE_DUMP = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
    / "dump-triage-workbench" / "xla-large-4-layers"


@pytest.mark.slow
def test_large_transformer_dump_agrees() -> None:
    """The 2,600-file dump `benchmarks/large_dump.py` makes (6,000-line modules)."""
    if not (LARGE_DUMP / ".complete").exists():
        pytest.skip("no large dump: make it with `python benchmarks/large_dump.py` (needs JAX)")
    from workbench.formats.hlo_text import parse_hlo_text

    pairs = 0
    for text_path in sorted(LARGE_DUMP.glob("*.txt")):
        proto_path = text_path.with_name(text_path.name[: -len(".txt")] + ".hlo.pb")
        if not proto_path.exists():
            continue
        text = parse_hlo_text(text_path.read_text(), text_path.name)
        compare(text, read_hlo_proto(proto_path.read_bytes(), proto_path.name), text_path.name)
        pairs += 1
    assert pairs > 800


def test_linear_algebra_options_read_as_the_text_prints_them(corpus: Path) -> None:
    """triangular-solve and cholesky options (on real instructions turned into those ops)
    become the attributes XLA's printer writes: the true flags, and always transpose_a."""
    proto = hlo_pb2.HloProto.FromString((corpus / f"{LN}.hlo.pb").read_bytes())
    entry = proto.hlo_module.computations[-1]
    solve, factor = entry.instructions[-1], entry.instructions[-2]
    solve.opcode = "triangular-solve"
    solve.triangular_solve_options.left_side = True
    solve.triangular_solve_options.transpose_a = \
        xla_data_pb2.TriangularSolveOptions.ADJOINT
    factor.opcode = "cholesky"
    factor.cholesky_options.lower = True
    module = read_hlo_proto(proto.SerializeToString(), "x.pb")
    instructions = module.entry.by_name
    assert instructions[solve.name].attrs == {"left_side": "true", "transpose_a": "ADJOINT"}
    assert instructions[factor.name].attrs == {"lower": "true"}


def _mesh(*axes: tuple[str, int]) -> bytes:
    """A MeshProto (XLA's, newer than our subset): {1 axes {1 name, 2 size}}."""
    out = b""
    for name, size in axes:
        axis = b"\x0a" + bytes([len(name)]) + name.encode() + b"\x10" + bytes([size])
        out += b"\x0a" + bytes([len(axis)]) + axis
    return out


def _varint(value: int) -> bytes:
    out = b""
    while value > 0x7F:
        out += bytes([value & 0x7F | 0x80])
        value >>= 7
    return out + bytes([value])


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (payloads here are short)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_named_sharding_text() -> None:
    """Shardy's named shardings (OpSharding field 14) as the text printer shows them; forms
    the replay does not follow (sub-axes, a mesh's own device order) stay unrecognized."""
    sharding = xla_data_pb2.OpSharding
    mesh = _field(2, _mesh(("data", 4), ("model", 2)))
    dims = _field(3, _field(1, b"") + b"\x10\x01") + _field(3, b"\x10\x01")  # [{'data'}, {}]
    assert sharding_text(sharding.FromString(_field(14, mesh + dims))) == \
        "{mesh['data'=4,'model'=2], [{'data'}, {}]}"
    model = _field(3, _field(1, b"\x08\x01") + b"\x10\x01")
    assert sharding_text(sharding.FromString(_field(14, mesh + model))) == \
        "{mesh['data'=4,'model'=2], [{'model'}]}"
    assert sharding_text(sharding.FromString(_field(14, mesh + _field(7, b"")))) == \
        "{mesh['data'=4,'model'=2], manual}"
    sub_axis = _field(3, _field(1, b"\x08\x00" + _field(2, b"\x08\x01\x10\x02")) + b"\x10\x01")
    ordered = _field(2, _mesh(("i", 2)) + b"\x12\x02\x01\x00")  # device_ids [1, 0]
    closed = _field(3, _field(1, b"") + b"\x10\x01")
    open_dimension = _field(3, _field(1, b""))  # Shardy's `{'data', ?}`
    for unread in (mesh + sub_axis, ordered + closed, mesh + open_dimension):
        assert sharding_text(sharding.FromString(_field(14, unread))) == \
            "{unrecognized sharding (fields 14)}"


def _all_reduce_module(**fields) -> hlo_pb2.HloModuleProto:
    shape = xla_data_pb2.ShapeProto(element_type=xla_data_pb2.F32, dimensions=[4])
    parameter = hlo_pb2.HloInstructionProto(name="p", opcode="parameter", id=1, shape=shape)
    reduce = hlo_pb2.HloInstructionProto(name="r", opcode="all-reduce", id=2, shape=shape,
                                         operand_ids=[1], **fields)
    computation = hlo_pb2.HloComputationProto(name="main", id=1, root_id=2,
                                              instructions=[parameter, reduce])
    return hlo_pb2.HloModuleProto(name="m", computations=[computation], entry_computation_id=1)


def test_replica_groups_in_every_proto_form() -> None:
    """Field 49, the collective device list (87: explicit or iota), and newer XLA's fields 92
    (iota) and 93 (mesh axes) all read as the text printer spells them."""
    def groups(proto: hlo_pb2.HloModuleProto, extra: bytes = b"") -> str | None:
        raw = hlo_pb2.HloModuleProto.FromString(proto.SerializeToString())
        raw.computations[0].instructions[1].MergeFromString(extra)  # fields our schema lacks
        module = read_hlo_proto(raw.SerializeToString(), "m.hlo.pb")
        return module.entry.by_name["r"].attrs.get("replica_groups")

    group = xla_data_pb2.ReplicaGroup
    assert groups(_all_reduce_module(replica_groups=[group(replica_ids=[0, 1]),
                                                     group(replica_ids=[2, 3])])) == \
        "{{0,1},{2,3}}"
    listed = xla_data_pb2.CollectiveDeviceListProto(replica_groups=[group(replica_ids=[1, 0])])
    assert groups(_all_reduce_module(collective_device_list=listed)) == "{{1,0}}"
    iota = xla_data_pb2.CollectiveDeviceListProto(
        iota_replica_group_list=xla_data_pb2.IotaReplicaGroupListProto(
            num_replica_groups=2, num_devices_per_group=4, iota_reshape_dims=[4, 2],
            iota_transpose_perm=[1, 0]))
    assert groups(_all_reduce_module(collective_device_list=iota)) == "[2,4]<=[4,2]T(1,0)"
    plain = _all_reduce_module()
    assert groups(plain) is None
    # {1 groups, 2 per group, 3 reshape dims (packed), 4 transpose}: [4,2]<=[8]
    iota_92 = _field(92, b"\x08\x04\x10\x02\x1a\x01\x08\x22\x01\x00")
    assert groups(plain, iota_92) == "[4,2]<=[8]"
    axes = _field(1, _mesh(("data", 4), ("model", 2))) + _field(2, b"")
    assert groups(plain, _field(93, axes)) == "mesh['data'=4,'model'=2] {'data'}"
    sub_axis = _field(1, _mesh(("i", 8))) + _field(2, _field(2, b"\x08\x01\x10\x02"))
    assert groups(plain, _field(93, sub_axis)) == \
        "{unrecognized replica groups}"

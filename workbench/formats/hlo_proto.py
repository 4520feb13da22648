"""Read XLA's HloProto / HloModuleProto (`*.hlo.pb` dumps, the module inside a snapshot) into
the same HLO IR model the text parser produces.

The proto refers to operands and called computations by id; they become names, with called
computations in XLA's order. Fields the text printer leaves out when they hold their default
are normalized the same way here (compare's comparison type when it is the default for the
operand type, all-DEFAULT operand precision, group counts of 1), and fields whose text form is
always printed for an opcode are always set for it (a broadcast's `dimensions` may be empty),
so both readers give equal instructions. Full constants come from the proto even where the
text dump elides them. Fields newer than our schema that a sharded program needs (device
counts, iota and mesh replica groups, Shardy's shardings) are read from their numbers.
"""

from __future__ import annotations

import numpy as np
from google.protobuf import empty_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from workbench.formats.literal import (
    LiteralError,
    literal_from_proto,
    shape_from_proto,
)
from workbench.hlo_ir import (
    Computation,
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    FileLocation,
    GatherDimensionNumbers,
    HloModule,
    Instruction,
    Metadata,
    PaddingDimension,
    ScatterDimensionNumbers,
    Shape,
    SliceDimension,
    SourceTables,
    StackFrame,
    WindowDimension,
)
from workbench.protos import hlo_pb2, xla_data_pb2
from workbench.sources import ReadError

# Opcodes whose text form always carries the attribute, even when it is empty.
_ALWAYS_DIMENSIONS = frozenset((
    "broadcast", "concatenate", "reduce", "reverse", "transpose", "sort", "map", "iota",
    "all-gather", "all-gather-start", "reduce-scatter",
))
_FLOAT_TYPES = frozenset((
    "f16", "bf16", "f32", "f64", "c64", "c128", "f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz",
    "f8e5m2fnuz", "f8e4m3fnuz", "f8e4m3", "f8e3m4", "f4e2m1fn", "f8e8m0fnu",
))
_PRECISION_NAMES = {v: n.lower() for n, v in xla_data_pb2.PrecisionConfig.Precision.items()}
# PrecisionConfig.algorithm as the text form names it: ALG_DOT_BF16_BF16_F32 -> dot_bf16_bf16_f32
_ALGORITHM_NAMES = {v: n.lower().removeprefix("alg_")
                    for n, v in xla_data_pb2.PrecisionConfig.Algorithm.items() if v}
_SHARDING = xla_data_pb2.OpSharding
_METADATA_FIELDS = frozenset(Metadata.__dataclass_fields__)


def read_hlo_proto(data: bytes, file: str = "") -> HloModule:
    """An `HloProto` (what XLA dumps as `.hlo.pb`) or a bare `HloModuleProto`."""
    module_proto = None
    try:
        wrapper = hlo_pb2.HloProto.FromString(data)
        if wrapper.hlo_module.computations:
            module_proto = wrapper.hlo_module
    except DecodeError:
        pass
    if module_proto is None:
        try:
            bare = hlo_pb2.HloModuleProto.FromString(data)
        except DecodeError as error:
            raise ReadError(file, f"not an HloProto (truncated or damaged?): {error}") from None
        if not bare.computations:
            raise ReadError(file, "no HLO module in this proto (not an HloProto?)")
        module_proto = bare
    return module_from_proto(module_proto, file)


def module_from_proto(proto: hlo_pb2.HloModuleProto, file: str = "") -> HloModule:
    """HloModuleProto -> HloModule. Raises ReadError when ids do not resolve (a cut proto)."""
    computation_names = {c.id: c.name for c in proto.computations}
    if len(computation_names) != len(proto.computations):
        raise ReadError(file, "two computations share an id")
    converter = _Converter(computation_names)
    computations = []
    for computation in proto.computations:
        try:
            computations.append(converter.computation(computation))
        except KeyError as error:
            raise ReadError(file, f"computation {computation.name}: {error.args[0]}") from None
        except LiteralError as error:
            raise ReadError(file, f"computation {computation.name}: {error}") from None
    entry_name = computation_names.get(proto.entry_computation_id)
    if entry_name is None and proto.entry_computation_name in {c.name for c in computations}:
        entry_name = proto.entry_computation_name
    if entry_name is None:
        raise ReadError(file, f"entry computation id {proto.entry_computation_id} is not in the "
                              "module (truncated proto?)")
    for computation in computations:
        computation.is_entry = computation.name == entry_name
    attributes = _device_counts(proto)
    if proto.schedule.sequences:
        attributes["is_scheduled"] = "true"
        _in_schedule_order(computations, proto.schedule)
    if proto.frontend_attributes.map:
        attributes["frontend_attributes"] = _frontend_attributes(proto.frontend_attributes)
    layout = None
    if proto.HasField("host_program_shape"):
        program = proto.host_program_shape
        layout = "(" + ", ".join(str(shape_from_proto(p)) for p in program.parameters) + ")->" \
            + str(shape_from_proto(program.result))
    return HloModule(name=proto.name, computations=computations, entry_name=entry_name,
                     id=proto.id, entry_computation_layout=layout, attributes=attributes,
                     source=_source_tables(proto.stack_frame_index))


def _in_schedule_order(computations: list[Computation],
                       schedule: hlo_pb2.HloScheduleProto) -> None:
    """Put a scheduled module's instructions in their schedule's order, the order XLA prints
    them in (the proto lists them in another)."""
    for computation in computations:
        sequence = schedule.sequences.get(computation.id or 0)
        if sequence is None:
            continue
        position = {id_: n for n, id_ in enumerate(sequence.instruction_ids)}
        if len(position) == len(computation.instructions) and all(
                i.id in position for i in computation.instructions):
            computation.instructions.sort(key=lambda i: position[i.id])


class _Converter:
    """Converts one module's computations; caches shapes and metadata, which repeat a lot.

    Each instruction's set fields are listed once (`ListFields`): reading every field of a
    proto3 message one by one costs far more than the few it actually has.
    """

    def __init__(self, computation_names: dict[int, str]) -> None:
        self.computation_names = computation_names
        self.shapes: dict[bytes, Shape] = {}
        self.metadata: dict[bytes, Metadata] = {}

    def shape(self, proto: xla_data_pb2.ShapeProto) -> Shape:
        key = proto.SerializeToString()
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = shape_from_proto(proto)
        return shape

    def computation(self, proto: hlo_pb2.HloComputationProto) -> Computation:
        names: dict[int, str] = {}
        shapes: dict[int, Shape] = {}
        instructions = []
        for instruction in proto.instructions:
            if instruction.id in names:  # operands name instructions by id
                raise KeyError(f"{instruction.name}: its id {instruction.id} is also that of "
                               f"{names[instruction.id]}")
            converted = self.instruction(instruction, names, shapes)
            names[instruction.id] = instruction.name
            shapes[instruction.id] = converted.shape
            instructions.append(converted)
        if proto.root_id not in names:
            raise KeyError(f"root id {proto.root_id} is not one of its instructions")
        return Computation(name=proto.name, instructions=instructions,
                           root_name=names[proto.root_id], id=proto.id)

    def instruction(self, proto: hlo_pb2.HloInstructionProto, names: dict[int, str],
                    shapes: dict[int, Shape]) -> Instruction:
        present = {descriptor.name: value for descriptor, value in proto.ListFields()}
        opcode = present.get("opcode", "")
        name = present.get("name", "")
        try:
            operands = [names[i] for i in present.get("operand_ids", ())]
        except KeyError as error:
            raise KeyError(f"{name}: operand id {error.args[0]} is not defined before it") \
                from None
        try:
            called = [self.computation_names[i]
                      for i in present.get("called_computation_ids", ())]
        except KeyError as error:
            raise KeyError(f"{name}: called computation id {error.args[0]} is not in the "
                           "module") from None
        shape = self.shape(proto.shape)
        fields: dict = {}
        if opcode == "parameter":
            fields["parameter_number"] = present.get("parameter_number", 0)
        elif opcode == "get-tuple-element":
            fields["tuple_index"] = present.get("tuple_index", 0)
        elif opcode == "constant":
            try:
                fields["literal"] = literal_from_proto(proto.literal)
            except LiteralError as error:
                raise LiteralError(f"constant {name}: {error}") from None
        elif opcode == "compare":
            fields["comparison_direction"] = present.get("comparison_direction")
            operand_ids = present.get("operand_ids", ())
            operand_type = shapes[operand_ids[0]].element_type if operand_ids else ""
            kind = present.get("comparison_type") or (
                _comparison_order(proto) if operand_type in _FLOAT_TYPES else None)
            if kind and kind != _default_comparison(operand_type):
                fields["comparison_type"] = kind
        elif opcode == "fusion":
            fields["fusion_kind"] = present.get("fusion_kind")
        elif opcode == "reduce-precision":
            fields["exponent_bits"] = present.get("exponent_bits", 0)
            fields["mantissa_bits"] = present.get("mantissa_bits", 0)
        elif opcode == "rng-bit-generator":
            fields["rng_algorithm"] = _enum_name(xla_data_pb2.RandomAlgorithm,
                                                 present.get("rng_algorithm", 0)).lower()
        elif opcode == "rng":
            fields["distribution"] = _enum_name(xla_data_pb2.RandomDistribution,
                                                present.get("distribution", 0)).lower()
        elif opcode == "fft":
            fields["fft_type"] = _enum_name(xla_data_pb2.FftType, present.get("fft_type", 0))
        elif opcode == "topk":
            fields["k"] = present.get("k", 0)
            fields["largest"] = present.get("largest", False)
        if "dimensions" in present or opcode in _ALWAYS_DIMENSIONS:
            fields["dimensions"] = tuple(present.get("dimensions", ()))
        if "slice_dimensions" in present or opcode == "slice":
            fields["slice"] = tuple(SliceDimension(d.start, d.limit, d.stride or 1)
                                    for d in present.get("slice_dimensions", ()))
        if "dynamic_slice_sizes" in present or opcode == "dynamic-slice":
            fields["dynamic_slice_sizes"] = tuple(present.get("dynamic_slice_sizes", ()))
        if "fft_length" in present or opcode == "fft":
            fields["fft_length"] = tuple(present.get("fft_length", ()))
        if "window" in present:
            fields["window"] = tuple(
                WindowDimension(d.size, d.stride or 1, d.padding_low, d.padding_high,
                                d.window_dilation or 1, d.base_dilation or 1, d.window_reversal)
                for d in present["window"].dimensions)
        if "padding_config" in present or opcode == "pad":
            fields["padding_config"] = tuple(
                PaddingDimension(d.edge_padding_low, d.edge_padding_high, d.interior_padding)
                for d in proto.padding_config.dimensions)
        if "dot_dimension_numbers" in present or opcode == "dot":
            dot = proto.dot_dimension_numbers
            fields["dot_dimension_numbers"] = DotDimensionNumbers(
                tuple(dot.lhs_contracting_dimensions), tuple(dot.rhs_contracting_dimensions),
                tuple(dot.lhs_batch_dimensions), tuple(dot.rhs_batch_dimensions))
        if "convolution_dimension_numbers" in present:
            conv = present["convolution_dimension_numbers"]
            fields["convolution_dimension_numbers"] = ConvolutionDimensionNumbers(
                conv.input_batch_dimension, conv.input_feature_dimension,
                tuple(conv.input_spatial_dimensions), conv.kernel_input_feature_dimension,
                conv.kernel_output_feature_dimension, tuple(conv.kernel_spatial_dimensions),
                conv.output_batch_dimension, conv.output_feature_dimension,
                tuple(conv.output_spatial_dimensions))
        if "gather_dimension_numbers" in present or opcode == "gather":
            gather = proto.gather_dimension_numbers
            fields["gather_dimension_numbers"] = GatherDimensionNumbers(
                tuple(gather.offset_dims), tuple(gather.collapsed_slice_dims),
                tuple(gather.start_index_map), gather.index_vector_dim,
                tuple(gather.operand_batching_dims), tuple(gather.start_indices_batching_dims))
        if "gather_slice_sizes" in present or opcode == "gather":
            fields["gather_slice_sizes"] = tuple(present.get("gather_slice_sizes", ()))
        if "scatter_dimension_numbers" in present or opcode == "scatter":
            scatter = proto.scatter_dimension_numbers
            fields["scatter_dimension_numbers"] = ScatterDimensionNumbers(
                tuple(scatter.update_window_dims), tuple(scatter.inserted_window_dims),
                tuple(scatter.scatter_dims_to_operand_dims), scatter.index_vector_dim,
                tuple(scatter.input_batching_dims), tuple(scatter.scatter_indices_batching_dims))
        if "precision_config" in present:
            precision = [_PRECISION_NAMES.get(p, str(p))
                         for p in present["precision_config"].operand_precision]
            if any(p != "default" for p in precision):
                fields["operand_precision"] = tuple(precision)
        if "custom_call_target" in present:
            fields["custom_call_target"] = present["custom_call_target"]
        if "backend_config" in present:
            fields["backend_config"] = present["backend_config"].decode("utf-8",
                                                                        "backslashreplace")
        if "sharding" in present:
            fields["sharding"] = sharding_text(present["sharding"])
        if "metadata" in present:
            metadata = self.metadata_of(present["metadata"])
            if metadata is not None:
                fields["metadata"] = metadata
        attrs = _attrs(present, names)
        if "precision_config" in present and present["precision_config"].algorithm:
            number = present["precision_config"].algorithm
            attrs["algorithm"] = _ALGORITHM_NAMES.get(number, f"algorithm {number}")
        if opcode in _GROUPED and _DEVICE_LIST_FIELDS & {
                f.field_number for f in UnknownFieldSet(proto)}:
            # where XLA prints them: after the channel, before the flags
            ordered = {key: value for key, value in attrs.items() if key == "channel_id"}
            ordered["replica_groups"] = _newer_replica_groups(proto)
            ordered.update((key, value) for key, value in attrs.items() if key not in ordered)
            attrs = ordered
        if opcode == "scan":
            attrs.update(_scan_attrs(proto))
        return Instruction(
            name=name, opcode=opcode, shape=shape, operands=operands, called_computations=called,
            id=present.get("id", 0), feature_group_count=present.get("feature_group_count", 1),
            batch_group_count=present.get("batch_group_count", 1),
            is_stable=present.get("is_stable", False), attrs=attrs, **fields)

    def metadata_of(self, proto: xla_data_pb2.OpMetadata) -> Metadata | None:
        key = proto.SerializeToString()
        if not key:
            return None
        metadata = self.metadata.get(key)
        if metadata is None:
            metadata = self.metadata[key] = Metadata(
                **{d.name: v for d, v in proto.ListFields() if d.name in _METADATA_FIELDS})
        return metadata


def _enum_name(enum: EnumTypeWrapper, value: int) -> str:
    """The name of an enum value; `unknown_<n>` for a value this subset does not know (a
    newer XLA's, or a damaged file's): proto3 enums are open, the decoder keeps any number.
    The evaluator then reports the op as unsupported instead of guessing."""
    try:
        return enum.Name(value)
    except ValueError:
        return f"unknown_{value}"


def _default_comparison(element_type: str) -> str:
    """XLA prints `type=` only when it differs from the default for the operand type."""
    if element_type in _FLOAT_TYPES:
        return "FLOAT"
    if element_type.startswith("s"):
        return "SIGNED"
    return "UNSIGNED"


_BATCH_NORM = frozenset(("batch-norm-training", "batch-norm-inference", "batch-norm-grad"))
_ATTR_FIELDS = frozenset((
    "channel_id", "replica_groups", "source_target_pairs", "use_global_device_ids",
    "indices_are_sorted", "unique_indices", "custom_call_has_side_effect", "is_host_transfer",
    "control_predecessor_ids", "frontend_attributes", "epsilon", "feature_index",
    "async_execution_thread", "collective_device_list",
))


def _attrs(present: dict, names: dict[int, str]) -> dict[str, str]:
    """Attributes the model does not type, spelled as the text printer spells them."""
    attrs: dict[str, str] = {}
    if _ATTR_FIELDS.isdisjoint(present) and present.get("opcode") not in _BATCH_NORM:
        return attrs
    if present.get("channel_id", 0) > 0:
        attrs["channel_id"] = str(present["channel_id"])
    groups = _replica_groups(present)
    if groups is not None:
        attrs["replica_groups"] = groups
    if "source_target_pairs" in present:
        attrs["source_target_pairs"] = "{" + ",".join(
            f"{{{p.source},{p.target}}}" for p in present["source_target_pairs"]) + "}"
    for flag in ("use_global_device_ids", "indices_are_sorted", "unique_indices",
                 "custom_call_has_side_effect", "is_host_transfer"):
        if present.get(flag):
            attrs[flag] = "true"
    if "control_predecessor_ids" in present:
        attrs["control-predecessors"] = "{" + ", ".join(
            f"%{names.get(i, i)}" for i in present["control_predecessor_ids"]) + "}"
    if "frontend_attributes" in present and present["frontend_attributes"].map:
        attrs["frontend_attributes"] = _frontend_attributes(present["frontend_attributes"])
    if present.get("opcode") in _BATCH_NORM:
        # a float field: printed as XLA prints it, the shortest f32 that reads back (1e-05)
        attrs["epsilon"] = str(np.float32(present.get("epsilon", 0.0)))
        attrs["feature_index"] = str(present.get("feature_index", 0))
    if "triangular_solve_options" in present:  # printed: the true flags, always transpose_a
        options = present["triangular_solve_options"]
        for flag in ("left_side", "lower", "unit_diagonal"):
            if getattr(options, flag):
                attrs[flag] = "true"
        attrs["transpose_a"] = _enum_name(xla_data_pb2.TriangularSolveOptions.Transpose,
                                          options.transpose_a)
    if "cholesky_options" in present and present["cholesky_options"].lower:
        attrs["lower"] = "true"
    thread = present.get("async_execution_thread")
    if thread and thread != "main":
        attrs["async_execution_thread"] = f'"{thread}"'
    return attrs


# Newer XLA (JAX 0.11 on) records a compare's order in a field of its own, 102, as "TOTAL" or
# "PARTIAL" (its text: `order=TOTAL`), instead of `comparison_type`.
_COMPARISON_ORDER_FIELD = 102


def _comparison_order(proto: hlo_pb2.HloInstructionProto) -> str | None:
    """TOTALORDER when a newer XLA's compare says `order=TOTAL`; None otherwise."""
    for field in UnknownFieldSet(proto):
        if field.field_number == _COMPARISON_ORDER_FIELD and field.data == b"TOTAL":
            return "TOTALORDER"
    return None


# A scan's fields, newer than the schema this reader is built from: the numbers XLA 0.11
# writes (`num_carries=1, is_associative=true` as 95=1, 96=1; 82 is an empty message every
# instruction of that XLA carries). Any other field set on a scan is named, so the evaluator
# says it cannot read it instead of guessing (a reversed scan, say).
_SCAN_FIELDS = {95: "num_carries", 96: "is_associative"}
_EMPTY_FIELDS = frozenset((82,))


def _scan_attrs(proto: hlo_pb2.HloInstructionProto) -> dict[str, str]:
    """A scan's attributes as the text printer spells them."""
    attrs: dict[str, str] = {}
    unread: list[str] = []
    for field in UnknownFieldSet(proto):
        number, data = field.field_number, field.data
        if number in _SCAN_FIELDS and isinstance(data, int):
            name = _SCAN_FIELDS[number]
            attrs[name] = str(data) if name == "num_carries" else ("true" if data else "false")
        elif not (number in _EMPTY_FIELDS and not data):
            unread.append(str(number))
    if attrs.get("is_associative") == "false":
        del attrs["is_associative"]
    if unread:
        attrs["unread_proto_fields"] = ",".join(sorted(set(unread), key=int))
    return attrs


def _frontend_attributes(proto: xla_data_pb2.FrontendAttributes) -> str:
    """`{key="value",...}`, keys sorted; values that are themselves `{...}` unquoted."""
    items = []
    for key in sorted(proto.map):
        value = proto.map[key]
        quoted = value if value.startswith("{") and value.endswith("}") else \
            '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        items.append(f"{key}={quoted}")
    return "{" + ",".join(items) + "}"


def sharding_text(proto: xla_data_pb2.OpSharding) -> str:
    """An OpSharding as the text printer shows it: `{replicated}`, `{maximal device=0}`,
    `{devices=[2,1]0,1}`, `{devices=[4,1]<=[4]}`, tuples `{{replicated}, {manual}}`."""
    unknown = {field.field_number: field.data for field in UnknownFieldSet(proto)}
    named = unknown.get(_NAMED_SHARDING_FIELD)
    if len(unknown) == 1 and isinstance(named, bytes):
        text = _named_sharding_text(named)
        if text is not None:
            return text
    if unknown:  # saying "replicated" would be wrong
        return "{unrecognized sharding (fields " + ", ".join(map(str, sorted(unknown))) + ")}"
    kind = proto.type
    if kind == _SHARDING.TUPLE:
        return "{" + ", ".join(sharding_text(s) for s in proto.tuple_shardings) + "}"
    if kind == _SHARDING.MAXIMAL:
        device = proto.tile_assignment_devices[0] if proto.tile_assignment_devices else 0
        return f"{{maximal device={device}}}"
    if kind == _SHARDING.OTHER:
        dims = ",".join(map(str, proto.tile_assignment_dimensions))
        if proto.iota_reshape_dims:
            devices = "<=[" + ",".join(map(str, proto.iota_reshape_dims)) + "]"
            if list(proto.iota_transpose_perm) != sorted(proto.iota_transpose_perm):
                devices += "T(" + ",".join(map(str, proto.iota_transpose_perm)) + ")"
        else:
            devices = ",".join(map(str, proto.tile_assignment_devices))
        text = f"devices=[{dims}]{devices}"
        if proto.replicate_on_last_tile_dim:
            text += " last_tile_dim_replicate"
        if proto.last_tile_dims:
            text += " last_tile_dims={" + ", ".join(
                _enum_name(_SHARDING.Type, t).lower() for t in proto.last_tile_dims) + "}"
        return "{" + text + "}"
    return "{" + _enum_name(_SHARDING.Type, kind).lower() + "}"


# Fields newer than the schema this reader is built from, at the numbers JAX 0.12's XLA writes.
# HloModuleProto 15: DeviceAssignmentProto {1 replica_count, 2 computation_count}, the
# module's `replica_count` and `num_partitions`.
_DEVICE_ASSIGNMENT_FIELD = 15
# HloInstructionProto 92: IotaReplicaGroupListProto (`[4,2]<=[8]`); 93:
# MeshAxesReplicaGroupListProto {1 mesh, 2 axes} (`mesh['data'=4,'model'=2] {'data'}`).
_IOTA_DEVICE_LIST_FIELD = 92
_MESH_DEVICE_LIST_FIELD = 93
_DEVICE_LIST_FIELDS = frozenset((_IOTA_DEVICE_LIST_FIELD, _MESH_DEVICE_LIST_FIELD))
_GROUPED = frozenset((  # the opcodes that carry replica groups
    "all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter",
    "all-to-all", "ragged-all-to-all", "collective-broadcast",
))
# OpSharding 14: NamedShardingProto (Shardy's), {2 mesh, 3 dim_shardings, 7 manual}; MeshProto
# {1 axes {1 name, 2 size}, 2 device_ids}; AxisRefProto {1 mesh_axis_index, 2 sub_axis_info};
# a dimension's sharding {1 axes, 2 is_closed}.
_NAMED_SHARDING_FIELD = 14


_Fields = dict[int, list[int | bytes]]


def _fields(data: bytes) -> _Fields:
    """The values of each field of a message this schema does not know, by number."""
    fields: _Fields = {}
    for field in UnknownFieldSet(empty_pb2.Empty.FromString(data)):
        fields.setdefault(field.field_number, []).append(field.data)
    return fields


def _ints(values: list[int | bytes]) -> list[int]:
    """A repeated integer field, packed (one bytes value of varints) or not."""
    numbers: list[int] = []
    for value in values:
        if isinstance(value, int):
            numbers.append(value)
            continue
        shift = number = 0
        for byte in value:
            number |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                numbers.append(number)
                shift = number = 0
    return numbers


def _int(fields: _Fields, number: int) -> int | None:
    """A singular integer field; 0 when absent (proto3), None when it is not an integer."""
    values = fields.get(number, [0])
    return values[-1] if isinstance(values[-1], int) else None


def _message(fields: _Fields, number: int) -> bytes | None:
    """A singular message field; empty when absent, None when it is not a message."""
    values = fields.get(number, [b""])
    return values[-1] if isinstance(values[-1], bytes) else None


def _device_counts(proto: hlo_pb2.HloModuleProto) -> dict[str, str]:
    """`num_partitions` and `replica_count` as the text header prints them (only above 1)."""
    counts: dict[str, str] = {}
    for field in UnknownFieldSet(proto):
        if field.field_number != _DEVICE_ASSIGNMENT_FIELD or not isinstance(field.data, bytes):
            continue
        assignment = _fields(field.data)
        for key, number in (("replica_count", 1), ("num_partitions", 2)):
            count = _int(assignment, number)
            if count is not None and count > 1:
                counts[key] = str(count)
    return counts


def _iota_groups_text(groups: int, per_group: int, reshape: list[int], perm: list[int]) -> str:
    """`[groups,per_group]<=[reshape]T(perm)`, the transpose left out when it is the identity."""
    text = f"[{groups},{per_group}]<=[" + ",".join(map(str, reshape)) + "]"
    if perm != sorted(perm):
        text += "T(" + ",".join(map(str, perm)) + ")"
    return text


def _replica_groups(present: dict) -> str | None:
    """Explicit replica groups (`{{0,1},{2,3}}`), from field 49 or the collective device list."""
    device_list = present.get("collective_device_list")
    if device_list is not None and device_list.HasField("iota_replica_group_list"):
        iota = device_list.iota_replica_group_list
        return _iota_groups_text(iota.num_replica_groups, iota.num_devices_per_group,
                                 list(iota.iota_reshape_dims), list(iota.iota_transpose_perm))
    groups = present.get("replica_groups") or (device_list.replica_groups if device_list else None)
    if groups is None:
        return None
    return "{" + ",".join("{" + ",".join(map(str, g.replica_ids)) + "}" for g in groups) + "}"


def _newer_replica_groups(proto: hlo_pb2.HloInstructionProto) -> str:
    """Replica groups from fields 92 or 93, as the text printer spells them; a form this
    reader does not follow is named, so the collective says so instead of guessing."""
    for field in UnknownFieldSet(proto):
        if not isinstance(field.data, bytes):
            continue
        fields = _fields(field.data)
        if field.field_number == _IOTA_DEVICE_LIST_FIELD:
            groups, per_group = _int(fields, 1), _int(fields, 2)
            if groups is not None and per_group is not None:
                return _iota_groups_text(groups, per_group, _ints(fields.get(3, [])),
                                         _ints(fields.get(4, [])))
        if field.field_number == _MESH_DEVICE_LIST_FIELD:
            mesh, names = _mesh_text(_message(fields, 1))
            axes = [_axis_text(axis, names) for axis in fields.get(2, [])]
            if mesh is not None and set(fields) <= {1, 2}:
                named = [axis for axis in axes if axis is not None]
                if len(named) == len(axes):
                    return mesh + " {" + ",".join(named) + "}"
    return "{unrecognized replica groups}"


def _mesh_text(data: bytes | None) -> tuple[str | None, list[str]]:
    """`mesh['data'=4,'model'=2]` and its axis names; None for a mesh without axes, with its
    own device order, or with fields this reader does not know."""
    if not data:
        return None, []
    fields = _fields(data)
    if set(fields) != {1}:
        return None, []
    names, sizes = [], []
    for axis in fields[1]:
        parts = _fields(axis) if isinstance(axis, bytes) else {}
        name, size = _message(parts, 1), _int(parts, 2)
        if not parts or set(parts) - {1, 2} or name is None or size is None:
            return None, []
        names.append(name.decode("utf-8", "backslashreplace"))
        sizes.append(size)
    text = "mesh[" + ",".join(f"'{n}'={s}" for n, s in zip(names, sizes, strict=True)) + "]"
    return text, names


def _axis_text(data: int | bytes, names: list[str]) -> str | None:
    """`'model'`; None for a sub-axis or an index outside the mesh."""
    if not isinstance(data, bytes):
        return None
    fields = _fields(data)
    index = _int(fields, 1)
    if set(fields) - {1} or index is None or index >= len(names):
        return None
    return f"'{names[index]}'"


def _named_sharding_text(data: bytes) -> str | None:
    """A Shardy sharding as the text printer shows it: `{mesh['i'=8], [{'i'}, {}]}`,
    `{mesh['i'=8], manual}` or, over a mesh without axes, `{mesh[], replicated}`; None for a
    form this reader does not know."""
    fields = _fields(data)
    if set(fields) - {2, 3, 7} or len(fields.get(2, ())) != 1:
        return None
    if _message(fields, 2) == b"" and 3 not in fields:  # no axes: every device holds it all
        return "{mesh[], manual}" if 7 in fields else "{mesh[], replicated}"
    mesh, names = _mesh_text(_message(fields, 2))
    if mesh is None:
        return None
    if 7 in fields:
        return None if 3 in fields else "{" + mesh + ", manual}"
    dims = []
    for dimension in fields.get(3, []):
        parts = _fields(dimension) if isinstance(dimension, bytes) else {0: []}
        # a dimension's axes and whether it is closed (an open one prints `?`)
        if set(parts) - {1, 2} or _int(parts, 2) != 1:
            return None
        axes = [_axis_text(axis, names) for axis in parts.get(1, [])]
        named = [axis for axis in axes if axis is not None]
        if len(named) != len(axes):
            return None
        dims.append("{" + ", ".join(named) + "}")
    return "{" + mesh + ", [" + ", ".join(dims) + "]}"


def _source_tables(proto: hlo_pb2.StackFrameIndexProto) -> SourceTables:
    """The stack frame index; ids are 1-based positions in each flat list."""
    return SourceTables(
        file_names={i + 1: name for i, name in enumerate(proto.file_names)},
        function_names={i + 1: name for i, name in enumerate(proto.function_names)},
        file_locations={
            i + 1: FileLocation(loc.file_name_id, loc.function_name_id, loc.line, loc.end_line,
                                loc.column, loc.end_column)
            for i, loc in enumerate(proto.file_locations)},
        stack_frames={i + 1: StackFrame(frame.file_location_id, frame.parent_frame_id)
                      for i, frame in enumerate(proto.stack_frames)},
    )


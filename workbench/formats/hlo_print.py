"""Print an HLO module of the model as XLA prints its text dumps.

A step dumped only as a proto (`--xla_dump_hlo_as_proto` without `_as_text`) is shown and
diffed through this text, so it should read like the text XLA writes: the same instruction
lines, attribute names and order, shapes with layouts, literals (f32 to 9 significant digits,
as XLA's `%.9g`). Newer XLA's syntax (JAX 0.11 on) by default: get-tuple-elements as
their uses (`%sort.11#0`), a total-order compare as `order=TOTAL`; older XLA's with
`newer_syntax=False` (get-tuple-elements on lines of their own, `type=TOTALORDER`): the proto
does not say which. What the proto does not hold is left out: the module's config flags in the
header (`allow_spmd_sharding_propagation_to_output`, ...) and the source tables (`FileNames`,
...), which the diff ignores by default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, Metadata, Shape
from workbench.model import Source, Step
from workbench.sources import ENTRY_READERS

# `Source(<proto file>, entry=PRINTED_FROM_PROTO)` reads as the text printed from that proto.
PRINTED_FROM_PROTO = 0
PROTO_SUFFIXES = (".hlo.pb",)

_CALLED_KEY = {
    "fusion": "calls", "call": "to_apply", "map": "to_apply", "reduce": "to_apply",
    "reduce-window": "to_apply", "sort": "to_apply", "scatter": "to_apply",
    "all-reduce": "to_apply", "all-reduce-start": "to_apply", "reduce-scatter": "to_apply",
    "scan": "to_apply", "custom-call": "called_computations", "async-start": "calls",
}
# Attributes a model keeps verbatim that XLA prints after the metadata-free ones.
_LATE_ATTRS = ("frontend_attributes", "control-predecessors")
_METADATA_ORDER = ("op_type", "op_name", "source_file", "source_line", "source_end_line",
                   "source_column", "source_end_column", "deduplicated_name",
                   "stack_frame_id", "scheduling_name")
_FLOAT_DIGITS = {"f64": 17, "f32": 9, "f16": 5, "bf16": 4}


def print_module(module: HloModule, *, newer_syntax: bool = True) -> str:
    """The module's text, as an XLA text dump holds it."""
    return "".join(_module_lines(module, newer_syntax))


def _module_lines(module: HloModule, newer_syntax: bool) -> Iterator[str]:
    entry = module.by_name[module.entry_name]
    layout = "(" + _listed(p.shape for p in entry.parameters) + ")->" + _shape(entry.root.shape)
    header = f"HloModule {module.name}, entry_computation_layout={{{layout}}}"
    for key, value in module.attributes.items():
        header += f", {key}={value}"
    yield header + "\n\n"
    for number, computation in enumerate(module.computations):
        if number:
            yield "\n"
        yield from _computation_lines(computation, newer_syntax)
    yield "\n"


def _computation_lines(computation: Computation, newer_syntax: bool) -> Iterator[str]:
    parameters = ", ".join(f"{p.name}: {_bare(p.shape)}" for p in computation.parameters)
    entry = "ENTRY " if computation.is_entry else ""
    yield (f"{entry}%{computation.name} ({parameters}) -> {_bare(computation.root.shape)} "
           "{\n")
    # get-tuple-element name -> how its uses print it (`%t#0`), when folded into them
    uses: dict[str, str] = {}
    for instruction in computation.instructions:
        is_root = instruction.name == computation.root_name
        if newer_syntax and instruction.opcode == "get-tuple-element" and not is_root:
            tuple_name = instruction.operands[0] if instruction.operands else ""
            uses[instruction.name] = \
                f"{uses.get(tuple_name, '%' + tuple_name)}#{instruction.tuple_index or 0}"
            continue
        root = "ROOT " if is_root else ""
        yield f"  {root}{instruction_text(instruction, uses, newer_syntax)}\n"
    yield "}\n"


def _listed(shapes: Iterable[Shape],
            item: Callable[[Shape, int], str] | None = None) -> str:
    """Shapes (or what `item` makes of them) joined as XLA joins them: every fifth after the
    first marked with its index."""
    return ", ".join(("" if i == 0 or i % 5 else f"/*index={i}*/")
                     + (item(shape, i) if item else _shape(shape))
                     for i, shape in enumerate(shapes))


def _bare(shape: Shape) -> str:
    """A shape without layouts, as in a computation's signature."""
    if shape.is_tuple:
        return "(" + _listed(shape.tuple_shapes, lambda s, _: _bare(s)) + ")"
    return str(Shape(shape.element_type, shape.dims, shape.dynamic))


def _shape(shape: Shape) -> str:
    """A shape with layouts."""
    return "(" + _listed(shape.tuple_shapes) + ")" if shape.is_tuple else str(shape)


def instruction_text(instruction: Instruction, uses: dict[str, str] | None = None,
                     newer_syntax: bool = True) -> str:
    """One instruction's line, without indentation and `ROOT`; `uses` says how to print the
    operands that are folded get-tuple-elements."""
    opcode = instruction.opcode
    if opcode == "parameter":
        inside = str(instruction.parameter_number or 0)
    elif opcode == "constant":
        inside = "{...}" if instruction.literal_elided else \
            literal_text(instruction.literal, instruction.shape)
    else:
        uses = uses or {}
        inside = ", ".join(("" if i == 0 or i % 5 else f"/*index={i}*/")
                           + uses.get(name, f"%{name}")
                           for i, name in enumerate(instruction.operands))
    attributes = list(_typed_attributes(instruction, newer_syntax))
    late = {key: value for key, value in instruction.attrs.items() if key in _LATE_ATTRS}
    early = [f"{key}={value}" for key, value in instruction.attrs.items()
             if key not in _LATE_ATTRS]
    if opcode in _COLLECTIVES_CALLING_LAST:
        attributes += [*early, *_called(instruction)]
    else:
        attributes += [*_called(instruction), *early]
    if instruction.sharding is not None:
        attributes.append(f"sharding={instruction.sharding}")
    attributes += [f"{key}={value}" for key, value in late.items()]
    if instruction.metadata is not None:
        attributes.append(f"metadata={{{_metadata(instruction.metadata)}}}")
    if instruction.backend_config:
        config = instruction.backend_config
        attributes.append("backend_config=" + (config if config.startswith("{") else
                                               _quoted(config)))
    tail = "".join(f", {attribute}" for attribute in attributes)
    return f"%{instruction.name} = {_shape(instruction.shape)} {opcode}({inside}){tail}"


def _ints(values: tuple[int, ...] | None) -> str:
    return "{" + ",".join(str(v) for v in values or ()) + "}"


def _typed_attributes(instruction: Instruction, newer_syntax: bool) -> Iterator[str]:
    opcode = instruction.opcode
    if opcode == "get-tuple-element":
        yield f"index={instruction.tuple_index or 0}"
    if instruction.slice is not None:
        yield "slice={" + ", ".join(
            f"[{d.start}:{d.limit}" + (f":{d.stride}]" if d.stride != 1 else "]")
            for d in instruction.slice) + "}"
    if instruction.dynamic_slice_sizes is not None:
        yield f"dynamic_slice_sizes={_ints(instruction.dynamic_slice_sizes)}"
    if instruction.padding_config is not None:
        yield "padding=" + "x".join(
            f"{d.edge_padding_low}_{d.edge_padding_high}"
            + (f"_{d.interior_padding}" if d.interior_padding else "")
            for d in instruction.padding_config)
    if instruction.dimensions is not None:
        if opcode == "iota":
            yield f"iota_dimension={instruction.dimensions[0] if instruction.dimensions else 0}"
        else:
            yield f"dimensions={_ints(instruction.dimensions)}"
    if instruction.window is not None:
        yield f"window={{{_window(instruction)}}}"
    if instruction.convolution_dimension_numbers is not None:
        yield f"dim_labels={_dim_labels(instruction)}"
    if instruction.feature_group_count != 1:
        yield f"feature_group_count={instruction.feature_group_count}"
    if instruction.batch_group_count != 1:
        yield f"batch_group_count={instruction.batch_group_count}"
    dot = instruction.dot_dimension_numbers
    if dot is not None:
        for key, values in (("lhs_batch_dims", dot.lhs_batch_dims),
                            ("lhs_contracting_dims", dot.lhs_contracting_dims),
                            ("rhs_batch_dims", dot.rhs_batch_dims),
                            ("rhs_contracting_dims", dot.rhs_contracting_dims)):
            if values:
                yield f"{key}={_ints(values)}"
    gather = instruction.gather_dimension_numbers
    if gather is not None:
        yield f"offset_dims={_ints(gather.offset_dims)}"
        yield f"collapsed_slice_dims={_ints(gather.collapsed_slice_dims)}"
        yield f"start_index_map={_ints(gather.start_index_map)}"
        if gather.operand_batching_dims:
            yield f"operand_batching_dims={_ints(gather.operand_batching_dims)}"
            yield f"start_indices_batching_dims={_ints(gather.start_indices_batching_dims)}"
        yield f"index_vector_dim={gather.index_vector_dim}"
        yield f"slice_sizes={_ints(instruction.gather_slice_sizes)}"
    scatter = instruction.scatter_dimension_numbers
    if scatter is not None:
        yield f"update_window_dims={_ints(scatter.update_window_dims)}"
        yield f"inserted_window_dims={_ints(scatter.inserted_window_dims)}"
        yield f"scatter_dims_to_operand_dims={_ints(scatter.scatter_dims_to_operand_dims)}"
        if scatter.input_batching_dims:
            yield f"input_batching_dims={_ints(scatter.input_batching_dims)}"
            yield f"scatter_indices_batching_dims={_ints(scatter.scatter_indices_batching_dims)}"
        yield f"index_vector_dim={scatter.index_vector_dim}"
    if instruction.operand_precision is not None:
        yield "operand_precision={" + ",".join(instruction.operand_precision) + "}"
    if instruction.comparison_direction is not None:
        yield f"direction={instruction.comparison_direction}"
    if instruction.comparison_type == "TOTALORDER" and newer_syntax:
        yield "order=TOTAL"
    elif instruction.comparison_type is not None:
        yield f"type={instruction.comparison_type}"
    if instruction.fusion_kind is not None:
        yield f"kind={instruction.fusion_kind}"
    if instruction.exponent_bits is not None:
        yield f"exponent_bits={instruction.exponent_bits}"
        yield f"mantissa_bits={instruction.mantissa_bits}"
    if instruction.rng_algorithm is not None:
        yield f"algorithm={instruction.rng_algorithm}"
    if instruction.distribution is not None:
        yield f"distribution={instruction.distribution}"
    if instruction.fft_type is not None:
        yield f"fft_type={instruction.fft_type}"
        yield f"fft_length={_ints(instruction.fft_length)}"
    if instruction.k is not None:
        yield f"k={instruction.k}"
        yield f"largest={'true' if instruction.largest else 'false'}"
    if instruction.is_stable:
        yield "is_stable=true"
    if instruction.custom_call_target is not None:
        yield f"custom_call_target={_quoted(instruction.custom_call_target)}"


# Collectives XLA prints with their channel and replica groups before `to_apply`.
_COLLECTIVES_CALLING_LAST = frozenset(("all-reduce", "all-reduce-start", "reduce-scatter"))


def _called(instruction: Instruction) -> Iterator[str]:
    called = instruction.called_computations
    if not called:
        return
    opcode = instruction.opcode
    if opcode == "while":
        yield f"condition=%{called[1]}"
        yield f"body=%{called[0]}"
    elif opcode == "conditional":
        yield "branch_computations={" + ", ".join(f"%{c}" for c in called) + "}"
    elif opcode == "select-and-scatter":
        yield f"select=%{called[0]}"
        yield f"scatter=%{called[1]}"
    elif _CALLED_KEY.get(opcode) == "called_computations":
        yield "called_computations={" + ", ".join(f"%{c}" for c in called) + "}"
    else:
        yield f"{_CALLED_KEY.get(opcode, 'to_apply')}=%{called[0]}"


def _window(instruction: Instruction) -> str:
    window = instruction.window or ()
    parts = ["size=" + "x".join(str(d.size) for d in window)]
    if any(d.stride != 1 for d in window):
        parts.append("stride=" + "x".join(str(d.stride) for d in window))
    if any(d.padding_low or d.padding_high for d in window):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in window))
    if any(d.base_dilation != 1 for d in window):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in window))
    if any(d.window_dilation != 1 for d in window):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in window))
    if any(d.window_reversal for d in window):
        parts.append("rhs_reversal=" + "x".join(str(int(d.window_reversal)) for d in window))
    return " ".join(parts)


def _dim_labels(instruction: Instruction) -> str:
    numbers = instruction.convolution_dimension_numbers
    assert numbers is not None

    def labels(rank: int, named: dict[int, str], spatial: tuple[int, ...]) -> str:
        letters = [named.get(d, "?") for d in range(rank)]
        for number, dimension in enumerate(spatial):
            letters[dimension] = str(number)
        return "".join(letters)

    spatial = len(numbers.input_spatial_dimensions) + 2
    return (labels(spatial, {numbers.input_batch_dimension: "b",
                             numbers.input_feature_dimension: "f"},
                   numbers.input_spatial_dimensions) + "_"
            + labels(spatial, {numbers.kernel_input_feature_dimension: "i",
                               numbers.kernel_output_feature_dimension: "o"},
                     numbers.kernel_spatial_dimensions) + "->"
            + labels(spatial, {numbers.output_batch_dimension: "b",
                               numbers.output_feature_dimension: "f"},
                     numbers.output_spatial_dimensions))


def _metadata(metadata: Metadata) -> str:
    parts = []
    for key in _METADATA_ORDER:
        value = getattr(metadata, key)
        if value:
            parts.append(f"{key}={_quoted(value) if isinstance(value, str) else value}")
    return " ".join(parts)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def literal_text(value: object, shape: Shape) -> str:
    """A constant's value as XLA prints it: `0.5`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`."""
    if shape.is_tuple:
        elements = value if isinstance(value, tuple) else ()
        return "(" + ", ".join(literal_text(v, s)
                               for v, s in zip(elements, shape.tuple_shapes, strict=False)) + ")"
    array = np.asarray(value)
    kind = shape.element_type

    def scalar(x: np.number | np.bool_) -> str:
        return _scalar_text(x, kind)

    if array.ndim == 0:
        return scalar(array.reshape(1)[0])

    def nested(a: np.ndarray) -> str:
        if a.ndim == 1:
            return "{" + ", ".join(scalar(x) for x in a) + "}"
        return "{ " + ", ".join(nested(row) for row in a) + " }"

    return nested(array)


def _scalar_text(x: np.number | np.bool_, kind: str) -> str:
    if kind == "pred":
        return "true" if bool(x) else "false"
    if kind in ("c64", "c128"):
        z = complex(x)
        digits = 9 if kind == "c64" else 17
        return f"({_float(z.real, digits)}, {_float(z.imag, digits)})"
    if kind.startswith(("s", "u")) and kind[1:].isdigit():
        return str(int(x))
    return _float(float(x), _FLOAT_DIGITS.get(kind, 9))


def _float(value: float, digits: int) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


def printed_source(step: Step) -> Source | None:
    """Where a step's text is: its text dump, else the text printed from its proto (a step
    dumped with `--xla_dump_hlo_as_proto` only); None when it has neither."""
    if step.text is not None:
        return step.text
    if step.proto is not None and step.proto.file.endswith(PROTO_SUFFIXES) and \
            step.proto.entry is None:
        return Source(step.proto.file, entry=PRINTED_FROM_PROTO)
    return None


def _read_printed(data: bytes, entry: int, file: str) -> str:
    from workbench.formats.hlo_proto import read_hlo_proto  # protobuf only when needed

    return print_module(read_hlo_proto(data, file))


for _suffix in PROTO_SUFFIXES:
    ENTRY_READERS[_suffix] = _read_printed

"""The HLO IR model: what the HLO text parser and the HloProto reader both produce.

It follows XLA's own structure (HloModule > HloComputation > HloInstruction) and keeps
semantically relevant attributes typed, so the evaluator never parses strings. Attributes the
workbench does not interpret are kept verbatim in `Instruction.attrs` (text) so nothing is lost.

Arrays (constants, snapshot literals) are numpy arrays in logical, row-major order, whatever
the layout; `Shape.layout` keeps the physical order (minor_to_major) for ops that depend on it
(bitcast after layout assignment). Tuple values are Python tuples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, Union

import numpy as np

# A literal value: an ndarray, or a tuple of literal values.
LiteralValue = Union[np.ndarray, tuple["LiteralValue", ...]]  # noqa: UP007 (runtime alias, py3.10)

ARRAY_TYPES = (
    "pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32",
    "u64", "f16", "bf16", "f32", "f64", "c64", "c128", "f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz",
    "f8e5m2fnuz", "f8e4m3fnuz", "f8e4m3", "f8e3m4", "f4e2m1fn", "f8e8m0fnu",
)


@dataclass(frozen=True)
class Shape:
    """An HLO shape: an array (`element_type` + dims), a tuple, a token or opaque.

    `dynamic[i]` is True for a bounded dynamic dimension (`<=N` in text); `dims[i]` is then the
    bound, or -1 for an unbounded one (`?`). `layout` is minor_to_major, or None when the dump
    does not give one. `layout_extra` keeps the rest of a printed layout verbatim (tiling
    `T(8,128)`, memory space `S(1)`).
    """

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: tuple[int, ...] | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    layout_extra: str = ""

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type in ARRAY_TYPES

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def size(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64)) if self.dims else 1

    @property
    def nbytes(self) -> int:
        """Bytes a value of this shape takes in memory, as exact integers (no overflow): a
        tuple's elements summed, a dynamic dimension at its bound; 0 for a token, an opaque
        value or a type numpy cannot hold (whoever decodes or evaluates it says so). What
        memory checks are sized by, before anything is made."""
        if self.is_tuple:
            return sum(element.nbytes for element in self.tuple_shapes)
        if not self.is_array:
            return 0
        try:
            itemsize = numpy_dtype(self.element_type).itemsize
        except (ValueError, ImportError):
            return 0
        return math.prod(max(d, 0) for d in self.dims) * itemsize

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        if not self.is_array:
            return f"{self.element_type}[]"
        dims = ",".join(
            ("?" if d < 0 else f"<={d}") if self.dynamic and self.dynamic[i] else str(d)
            for i, d in enumerate(self.dims)
        )
        text = f"{self.element_type}[{dims}]"
        if self.layout is not None and self.dims:
            extra = f":{self.layout_extra}" if self.layout_extra else ""
            text += "{" + ",".join(str(d) for d in self.layout) + extra + "}"
        return text


@dataclass(frozen=True)
class WindowDimension:
    """One dimension of a `window={...}` (reduce-window, convolution, select-and-scatter)."""

    size: int
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    window_dilation: int = 1  # text: rhs_dilate
    base_dilation: int = 1  # text: lhs_dilate
    window_reversal: bool = False  # text: rhs_reversal


@dataclass(frozen=True)
class DotDimensionNumbers:
    lhs_contracting_dims: tuple[int, ...] = ()
    rhs_contracting_dims: tuple[int, ...] = ()
    lhs_batch_dims: tuple[int, ...] = ()
    rhs_batch_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class ConvolutionDimensionNumbers:
    """Text form: `dim_labels=b01f_01io->b01f`."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


@dataclass(frozen=True)
class GatherDimensionNumbers:
    offset_dims: tuple[int, ...] = ()
    collapsed_slice_dims: tuple[int, ...] = ()
    start_index_map: tuple[int, ...] = ()
    index_vector_dim: int = 0
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class SliceDimension:
    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True)
class PaddingDimension:
    """Text form per dimension: `low_high[_interior]`, dimensions joined by `x`."""

    edge_padding_low: int
    edge_padding_high: int
    interior_padding: int = 0


@dataclass(frozen=True)
class Metadata:
    """`metadata={...}` / OpMetadata: where an instruction came from."""

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    stack_frame_id: int = 0
    source_end_line: int = 0
    source_column: int = 0
    source_end_column: int = 0
    deduplicated_name: str = ""
    scheduling_name: str = ""


@dataclass(slots=True)
class Instruction:
    """One HLO instruction.

    `operands` are instruction names in the same computation. `called_computations` are
    computation names in XLA's order for the opcode: fusion/call/map/reduce/reduce-window/sort/
    scatter/all-reduce: [to_apply or calls]; while: [body, condition]; conditional: the branches
    (a pred conditional is [true, false]); select-and-scatter: [select, scatter].
    `dimensions` also carries iota's `iota_dimension` (as XLA's proto does).
    """

    name: str
    opcode: str
    shape: Shape
    operands: list[str] = field(default_factory=list)
    called_computations: list[str] = field(default_factory=list)
    id: int | None = None
    parameter_number: int | None = None
    tuple_index: int | None = None
    dimensions: tuple[int, ...] | None = None
    literal: LiteralValue | None = None
    literal_elided: bool = False  # text constant printed as `{...}`: value unknown
    slice: tuple[SliceDimension, ...] | None = None
    dynamic_slice_sizes: tuple[int, ...] | None = None
    window: tuple[WindowDimension, ...] | None = None
    padding_config: tuple[PaddingDimension, ...] | None = None
    dot_dimension_numbers: DotDimensionNumbers | None = None
    convolution_dimension_numbers: ConvolutionDimensionNumbers | None = None
    gather_dimension_numbers: GatherDimensionNumbers | None = None
    gather_slice_sizes: tuple[int, ...] | None = None
    scatter_dimension_numbers: ScatterDimensionNumbers | None = None
    operand_precision: tuple[str, ...] | None = None  # dot/convolution: default, high, highest
    feature_group_count: int = 1
    batch_group_count: int = 1
    comparison_direction: str | None = None  # EQ NE LT LE GT GE
    comparison_type: str | None = None  # FLOAT TOTALORDER SIGNED UNSIGNED (None: by dtype)
    fusion_kind: str | None = None  # kLoop kInput kOutput kCustom
    custom_call_target: str | None = None
    backend_config: str | None = None
    sharding: str | None = None
    metadata: Metadata | None = None
    exponent_bits: int | None = None  # reduce-precision
    mantissa_bits: int | None = None
    is_stable: bool = False  # sort
    rng_algorithm: str | None = None  # rng-bit-generator
    distribution: str | None = None  # rng
    fft_type: str | None = None
    fft_length: tuple[int, ...] | None = None
    k: int | None = None  # topk
    largest: bool | None = None
    attrs: dict[str, str] = field(default_factory=dict)  # everything else, verbatim text


@dataclass
class Computation:
    """An HLO computation: instructions in definition order (operands before users)."""

    name: str
    instructions: list[Instruction]
    root_name: str
    is_entry: bool = False
    id: int | None = None

    @cached_property
    def by_name(self) -> dict[str, Instruction]:
        return {instruction.name: instruction for instruction in self.instructions}

    @property
    def root(self) -> Instruction:
        return self.by_name[self.root_name]

    @cached_property
    def parameters(self) -> list[Instruction]:
        """Parameters ordered by parameter number."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: i.parameter_number or 0)


@dataclass(frozen=True)
class FileLocation:
    file_name_id: int
    function_name_id: int
    line: int
    end_line: int = 0
    column: int = 0
    end_column: int = 0


@dataclass(frozen=True)
class StackFrame:
    file_location_id: int
    parent_frame_id: int


@dataclass
class SourceTables:
    """The `FileNames` / `FunctionNames` / `FileLocations` / `StackFrames` tables (1-based ids)."""

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, FileLocation] = field(default_factory=dict)
    stack_frames: dict[int, StackFrame] = field(default_factory=dict)

    def frame_location(self, frame_id: int) -> tuple[str, int, str] | None:
        """(file, line, function) of a stack frame's own location, or None if unknown."""
        frame = self.stack_frames.get(frame_id)
        if frame is None:
            return None
        location = self.file_locations.get(frame.file_location_id)
        if location is None:
            return None
        return (
            self.file_names.get(location.file_name_id, "?"),
            location.line,
            self.function_names.get(location.function_name_id, "?"),
        )


@dataclass
class HloModule:
    """An HLO module: computations with callees first and the entry last, as XLA prints them."""

    name: str
    computations: list[Computation]
    entry_name: str
    id: int | None = None
    entry_computation_layout: str | None = None  # verbatim text `(f32[6,8]{1,0})->f32[6,8]{1,0}`
    attributes: dict[str, str] = field(default_factory=dict)  # other header flags, verbatim
    source: SourceTables = field(default_factory=SourceTables)
    # A shadow (every float widened to f64, `replay/hlo/shadow.py`): the truth, whose sums
    # need not follow XLA's order (that order matters in the declared types only).
    widened: bool = False

    @cached_property
    def by_name(self) -> dict[str, Computation]:
        return {computation.name: computation for computation in self.computations}

    def callees(self, instruction: Instruction) -> list[str]:
        """The computations `instruction` calls, directly or not, callees first (the order a
        module lists them in)."""
        ordered: list[str] = []

        def visit(name: str) -> None:
            if name in ordered:
                return
            computation = self.by_name.get(name)
            if computation is not None:
                for inner in computation.instructions:
                    for called in inner.called_computations:
                        visit(called)
            ordered.append(name)

        for name in instruction.called_computations:
            visit(name)
        return ordered

    @property
    def entry(self) -> Computation:
        return self.by_name[self.entry_name]

    def source_location(self, instruction: Instruction) -> tuple[str, int] | None:
        """The user source file:line an instruction came from, from its metadata."""
        metadata = instruction.metadata
        if metadata is None:
            return None
        if metadata.stack_frame_id:
            location = self.source.frame_location(metadata.stack_frame_id)
            if location is not None:
                return location[0], location[1]
        if metadata.source_file:
            return metadata.source_file, metadata.source_line
        return None

    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)


@cache
def numpy_dtype(element_type: str) -> Any:
    """The numpy dtype that holds an HLO element type (ml_dtypes for bf16 and the f8 types).

    Raises ValueError naming the type when numpy + ml_dtypes cannot hold it.
    """
    simple = {
        "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
        "f16": np.float16, "f32": np.float32, "f64": np.float64,
        "c64": np.complex64, "c128": np.complex128,
    }
    if element_type in simple:
        return np.dtype(simple[element_type])
    import ml_dtypes

    extended = {
        "bf16": "bfloat16", "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn",
        "f8e4m3b11fnuz": "float8_e4m3b11fnuz", "f8e5m2fnuz": "float8_e5m2fnuz",
        "f8e4m3fnuz": "float8_e4m3fnuz", "f8e4m3": "float8_e4m3", "f8e3m4": "float8_e3m4",
        "f4e2m1fn": "float4_e2m1fn", "f8e8m0fnu": "float8_e8m0fnu", "s4": "int4", "u4": "uint4",
        "s2": "int2", "u2": "uint2", "s1": "int1", "u1": "uint1",
    }
    name = extended.get(element_type)
    if name is None or not hasattr(ml_dtypes, name):
        raise ValueError(f"element type {element_type} has no numpy representation")
    return np.dtype(getattr(ml_dtypes, name))

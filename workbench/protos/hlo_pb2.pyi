from workbench.protos import xla_data_pb2 as _xla_data_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CustomCallSchedule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_NONE: _ClassVar[CustomCallSchedule]
    SCHEDULE_LATEST: _ClassVar[CustomCallSchedule]
    SCHEDULE_EARLIEST: _ClassVar[CustomCallSchedule]

class CustomCallApiVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    API_VERSION_UNSPECIFIED: _ClassVar[CustomCallApiVersion]
    API_VERSION_ORIGINAL: _ClassVar[CustomCallApiVersion]
    API_VERSION_STATUS_RETURNING: _ClassVar[CustomCallApiVersion]
    API_VERSION_STATUS_RETURNING_UNIFIED: _ClassVar[CustomCallApiVersion]
    API_VERSION_TYPED_FFI: _ClassVar[CustomCallApiVersion]
SCHEDULE_NONE: CustomCallSchedule
SCHEDULE_LATEST: CustomCallSchedule
SCHEDULE_EARLIEST: CustomCallSchedule
API_VERSION_UNSPECIFIED: CustomCallApiVersion
API_VERSION_ORIGINAL: CustomCallApiVersion
API_VERSION_STATUS_RETURNING: CustomCallApiVersion
API_VERSION_STATUS_RETURNING_UNIFIED: CustomCallApiVersion
API_VERSION_TYPED_FFI: CustomCallApiVersion

class HloInstructionProto(_message.Message):
    __slots__ = ("name", "opcode", "shape", "metadata", "literal", "parameter_number", "fusion_kind", "tuple_index", "dimensions", "window", "convolution_dimension_numbers", "feature_group_count", "batch_group_count", "slice_dimensions", "exponent_bits", "mantissa_bits", "dynamic_slice_sizes", "padding_config", "outfeed_config", "distribution", "epsilon", "feature_index", "channel_id", "infeed_config", "custom_call_target", "outfeed_shape", "dot_dimension_numbers", "ragged_dot_dimension_numbers", "fft_type", "fft_length", "comparison_direction", "gather_dimension_numbers", "gather_slice_sizes", "id", "operand_ids", "control_predecessor_ids", "called_computation_ids", "sharding", "backend_config", "replica_groups", "all_reduce_id", "use_global_device_ids", "is_host_transfer", "is_stable", "scatter_dimension_numbers", "precision_config", "source_target_pairs", "domain_entry_sharding", "domain_exit_sharding", "constrain_layout", "operand_shapes_with_layout", "triangular_solve_options", "cholesky_options", "parameter_replication", "custom_call_has_side_effect", "output_operand_aliasing", "custom_call_schedule", "delta", "indices_are_sorted", "frontend_attributes", "unique_indices", "rng_algorithm", "comparison_type", "cross_program_prefetch_index", "padding_type", "custom_call_api_version", "async_execution_thread", "k", "largest", "collective_device_list", "is_composite", "result_accuracy")
    class SliceDimensions(_message.Message):
        __slots__ = ("start", "limit", "stride")
        START_FIELD_NUMBER: _ClassVar[int]
        LIMIT_FIELD_NUMBER: _ClassVar[int]
        STRIDE_FIELD_NUMBER: _ClassVar[int]
        start: int
        limit: int
        stride: int
        def __init__(self, start: _Optional[int] = ..., limit: _Optional[int] = ..., stride: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    OPCODE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    LITERAL_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FUSION_KIND_FIELD_NUMBER: _ClassVar[int]
    TUPLE_INDEX_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    CONVOLUTION_DIMENSION_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    FEATURE_GROUP_COUNT_FIELD_NUMBER: _ClassVar[int]
    BATCH_GROUP_COUNT_FIELD_NUMBER: _ClassVar[int]
    SLICE_DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    EXPONENT_BITS_FIELD_NUMBER: _ClassVar[int]
    MANTISSA_BITS_FIELD_NUMBER: _ClassVar[int]
    DYNAMIC_SLICE_SIZES_FIELD_NUMBER: _ClassVar[int]
    PADDING_CONFIG_FIELD_NUMBER: _ClassVar[int]
    OUTFEED_CONFIG_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    EPSILON_FIELD_NUMBER: _ClassVar[int]
    FEATURE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_ID_FIELD_NUMBER: _ClassVar[int]
    INFEED_CONFIG_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CALL_TARGET_FIELD_NUMBER: _ClassVar[int]
    OUTFEED_SHAPE_FIELD_NUMBER: _ClassVar[int]
    DOT_DIMENSION_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    RAGGED_DOT_DIMENSION_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    FFT_TYPE_FIELD_NUMBER: _ClassVar[int]
    FFT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    COMPARISON_DIRECTION_FIELD_NUMBER: _ClassVar[int]
    GATHER_DIMENSION_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    GATHER_SLICE_SIZES_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    OPERAND_IDS_FIELD_NUMBER: _ClassVar[int]
    CONTROL_PREDECESSOR_IDS_FIELD_NUMBER: _ClassVar[int]
    CALLED_COMPUTATION_IDS_FIELD_NUMBER: _ClassVar[int]
    SHARDING_FIELD_NUMBER: _ClassVar[int]
    BACKEND_CONFIG_FIELD_NUMBER: _ClassVar[int]
    REPLICA_GROUPS_FIELD_NUMBER: _ClassVar[int]
    ALL_REDUCE_ID_FIELD_NUMBER: _ClassVar[int]
    USE_GLOBAL_DEVICE_IDS_FIELD_NUMBER: _ClassVar[int]
    IS_HOST_TRANSFER_FIELD_NUMBER: _ClassVar[int]
    IS_STABLE_FIELD_NUMBER: _ClassVar[int]
    SCATTER_DIMENSION_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    PRECISION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TARGET_PAIRS_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_ENTRY_SHARDING_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_EXIT_SHARDING_FIELD_NUMBER: _ClassVar[int]
    CONSTRAIN_LAYOUT_FIELD_NUMBER: _ClassVar[int]
    OPERAND_SHAPES_WITH_LAYOUT_FIELD_NUMBER: _ClassVar[int]
    TRIANGULAR_SOLVE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CHOLESKY_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CALL_HAS_SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_OPERAND_ALIASING_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CALL_SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    INDICES_ARE_SORTED_FIELD_NUMBER: _ClassVar[int]
    FRONTEND_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_INDICES_FIELD_NUMBER: _ClassVar[int]
    RNG_ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    COMPARISON_TYPE_FIELD_NUMBER: _ClassVar[int]
    CROSS_PROGRAM_PREFETCH_INDEX_FIELD_NUMBER: _ClassVar[int]
    PADDING_TYPE_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CALL_API_VERSION_FIELD_NUMBER: _ClassVar[int]
    ASYNC_EXECUTION_THREAD_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    LARGEST_FIELD_NUMBER: _ClassVar[int]
    COLLECTIVE_DEVICE_LIST_FIELD_NUMBER: _ClassVar[int]
    IS_COMPOSITE_FIELD_NUMBER: _ClassVar[int]
    RESULT_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    name: str
    opcode: str
    shape: _xla_data_pb2.ShapeProto
    metadata: _xla_data_pb2.OpMetadata
    literal: _xla_data_pb2.LiteralProto
    parameter_number: int
    fusion_kind: str
    tuple_index: int
    dimensions: _containers.RepeatedScalarFieldContainer[int]
    window: _xla_data_pb2.Window
    convolution_dimension_numbers: _xla_data_pb2.ConvolutionDimensionNumbers
    feature_group_count: int
    batch_group_count: int
    slice_dimensions: _containers.RepeatedCompositeFieldContainer[HloInstructionProto.SliceDimensions]
    exponent_bits: int
    mantissa_bits: int
    dynamic_slice_sizes: _containers.RepeatedScalarFieldContainer[int]
    padding_config: _xla_data_pb2.PaddingConfig
    outfeed_config: bytes
    distribution: _xla_data_pb2.RandomDistribution
    epsilon: float
    feature_index: int
    channel_id: int
    infeed_config: bytes
    custom_call_target: str
    outfeed_shape: _xla_data_pb2.ShapeProto
    dot_dimension_numbers: _xla_data_pb2.DotDimensionNumbers
    ragged_dot_dimension_numbers: _xla_data_pb2.RaggedDotDimensionNumbers
    fft_type: _xla_data_pb2.FftType
    fft_length: _containers.RepeatedScalarFieldContainer[int]
    comparison_direction: str
    gather_dimension_numbers: _xla_data_pb2.GatherDimensionNumbers
    gather_slice_sizes: _containers.RepeatedScalarFieldContainer[int]
    id: int
    operand_ids: _containers.RepeatedScalarFieldContainer[int]
    control_predecessor_ids: _containers.RepeatedScalarFieldContainer[int]
    called_computation_ids: _containers.RepeatedScalarFieldContainer[int]
    sharding: _xla_data_pb2.OpSharding
    backend_config: bytes
    replica_groups: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.ReplicaGroup]
    all_reduce_id: int
    use_global_device_ids: bool
    is_host_transfer: bool
    is_stable: bool
    scatter_dimension_numbers: _xla_data_pb2.ScatterDimensionNumbers
    precision_config: _xla_data_pb2.PrecisionConfig
    source_target_pairs: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.SourceTarget]
    domain_entry_sharding: _xla_data_pb2.OpSharding
    domain_exit_sharding: _xla_data_pb2.OpSharding
    constrain_layout: bool
    operand_shapes_with_layout: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.ShapeProto]
    triangular_solve_options: _xla_data_pb2.TriangularSolveOptions
    cholesky_options: _xla_data_pb2.CholeskyOptions
    parameter_replication: _xla_data_pb2.ParameterReplication
    custom_call_has_side_effect: bool
    output_operand_aliasing: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.OutputOperandAliasing]
    custom_call_schedule: CustomCallSchedule
    delta: int
    indices_are_sorted: bool
    frontend_attributes: _xla_data_pb2.FrontendAttributes
    unique_indices: bool
    rng_algorithm: _xla_data_pb2.RandomAlgorithm
    comparison_type: str
    cross_program_prefetch_index: int
    padding_type: _xla_data_pb2.PaddingType
    custom_call_api_version: CustomCallApiVersion
    async_execution_thread: str
    k: int
    largest: bool
    collective_device_list: _xla_data_pb2.CollectiveDeviceListProto
    is_composite: bool
    result_accuracy: _xla_data_pb2.ResultAccuracy
    def __init__(self, name: _Optional[str] = ..., opcode: _Optional[str] = ..., shape: _Optional[_Union[_xla_data_pb2.ShapeProto, _Mapping]] = ..., metadata: _Optional[_Union[_xla_data_pb2.OpMetadata, _Mapping]] = ..., literal: _Optional[_Union[_xla_data_pb2.LiteralProto, _Mapping]] = ..., parameter_number: _Optional[int] = ..., fusion_kind: _Optional[str] = ..., tuple_index: _Optional[int] = ..., dimensions: _Optional[_Iterable[int]] = ..., window: _Optional[_Union[_xla_data_pb2.Window, _Mapping]] = ..., convolution_dimension_numbers: _Optional[_Union[_xla_data_pb2.ConvolutionDimensionNumbers, _Mapping]] = ..., feature_group_count: _Optional[int] = ..., batch_group_count: _Optional[int] = ..., slice_dimensions: _Optional[_Iterable[_Union[HloInstructionProto.SliceDimensions, _Mapping]]] = ..., exponent_bits: _Optional[int] = ..., mantissa_bits: _Optional[int] = ..., dynamic_slice_sizes: _Optional[_Iterable[int]] = ..., padding_config: _Optional[_Union[_xla_data_pb2.PaddingConfig, _Mapping]] = ..., outfeed_config: _Optional[bytes] = ..., distribution: _Optional[_Union[_xla_data_pb2.RandomDistribution, str]] = ..., epsilon: _Optional[float] = ..., feature_index: _Optional[int] = ..., channel_id: _Optional[int] = ..., infeed_config: _Optional[bytes] = ..., custom_call_target: _Optional[str] = ..., outfeed_shape: _Optional[_Union[_xla_data_pb2.ShapeProto, _Mapping]] = ..., dot_dimension_numbers: _Optional[_Union[_xla_data_pb2.DotDimensionNumbers, _Mapping]] = ..., ragged_dot_dimension_numbers: _Optional[_Union[_xla_data_pb2.RaggedDotDimensionNumbers, _Mapping]] = ..., fft_type: _Optional[_Union[_xla_data_pb2.FftType, str]] = ..., fft_length: _Optional[_Iterable[int]] = ..., comparison_direction: _Optional[str] = ..., gather_dimension_numbers: _Optional[_Union[_xla_data_pb2.GatherDimensionNumbers, _Mapping]] = ..., gather_slice_sizes: _Optional[_Iterable[int]] = ..., id: _Optional[int] = ..., operand_ids: _Optional[_Iterable[int]] = ..., control_predecessor_ids: _Optional[_Iterable[int]] = ..., called_computation_ids: _Optional[_Iterable[int]] = ..., sharding: _Optional[_Union[_xla_data_pb2.OpSharding, _Mapping]] = ..., backend_config: _Optional[bytes] = ..., replica_groups: _Optional[_Iterable[_Union[_xla_data_pb2.ReplicaGroup, _Mapping]]] = ..., all_reduce_id: _Optional[int] = ..., use_global_device_ids: bool = ..., is_host_transfer: bool = ..., is_stable: bool = ..., scatter_dimension_numbers: _Optional[_Union[_xla_data_pb2.ScatterDimensionNumbers, _Mapping]] = ..., precision_config: _Optional[_Union[_xla_data_pb2.PrecisionConfig, _Mapping]] = ..., source_target_pairs: _Optional[_Iterable[_Union[_xla_data_pb2.SourceTarget, _Mapping]]] = ..., domain_entry_sharding: _Optional[_Union[_xla_data_pb2.OpSharding, _Mapping]] = ..., domain_exit_sharding: _Optional[_Union[_xla_data_pb2.OpSharding, _Mapping]] = ..., constrain_layout: bool = ..., operand_shapes_with_layout: _Optional[_Iterable[_Union[_xla_data_pb2.ShapeProto, _Mapping]]] = ..., triangular_solve_options: _Optional[_Union[_xla_data_pb2.TriangularSolveOptions, _Mapping]] = ..., cholesky_options: _Optional[_Union[_xla_data_pb2.CholeskyOptions, _Mapping]] = ..., parameter_replication: _Optional[_Union[_xla_data_pb2.ParameterReplication, _Mapping]] = ..., custom_call_has_side_effect: bool = ..., output_operand_aliasing: _Optional[_Iterable[_Union[_xla_data_pb2.OutputOperandAliasing, _Mapping]]] = ..., custom_call_schedule: _Optional[_Union[CustomCallSchedule, str]] = ..., delta: _Optional[int] = ..., indices_are_sorted: bool = ..., frontend_attributes: _Optional[_Union[_xla_data_pb2.FrontendAttributes, _Mapping]] = ..., unique_indices: bool = ..., rng_algorithm: _Optional[_Union[_xla_data_pb2.RandomAlgorithm, str]] = ..., comparison_type: _Optional[str] = ..., cross_program_prefetch_index: _Optional[int] = ..., padding_type: _Optional[_Union[_xla_data_pb2.PaddingType, str]] = ..., custom_call_api_version: _Optional[_Union[CustomCallApiVersion, str]] = ..., async_execution_thread: _Optional[str] = ..., k: _Optional[int] = ..., largest: bool = ..., collective_device_list: _Optional[_Union[_xla_data_pb2.CollectiveDeviceListProto, _Mapping]] = ..., is_composite: bool = ..., result_accuracy: _Optional[_Union[_xla_data_pb2.ResultAccuracy, _Mapping]] = ...) -> None: ...

class HloComputationProto(_message.Message):
    __slots__ = ("name", "instructions", "program_shape", "id", "root_id", "is_fusion_computation", "execution_thread")
    NAME_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    PROGRAM_SHAPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    IS_FUSION_COMPUTATION_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_THREAD_FIELD_NUMBER: _ClassVar[int]
    name: str
    instructions: _containers.RepeatedCompositeFieldContainer[HloInstructionProto]
    program_shape: _xla_data_pb2.ProgramShapeProto
    id: int
    root_id: int
    is_fusion_computation: bool
    execution_thread: str
    def __init__(self, name: _Optional[str] = ..., instructions: _Optional[_Iterable[_Union[HloInstructionProto, _Mapping]]] = ..., program_shape: _Optional[_Union[_xla_data_pb2.ProgramShapeProto, _Mapping]] = ..., id: _Optional[int] = ..., root_id: _Optional[int] = ..., is_fusion_computation: bool = ..., execution_thread: _Optional[str] = ...) -> None: ...

class HloScheduleProto(_message.Message):
    __slots__ = ("sequences",)
    class InstructionSequence(_message.Message):
        __slots__ = ("instruction_ids",)
        INSTRUCTION_IDS_FIELD_NUMBER: _ClassVar[int]
        instruction_ids: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, instruction_ids: _Optional[_Iterable[int]] = ...) -> None: ...
    class SequencesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: HloScheduleProto.InstructionSequence
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[HloScheduleProto.InstructionSequence, _Mapping]] = ...) -> None: ...
    SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    sequences: _containers.MessageMap[int, HloScheduleProto.InstructionSequence]
    def __init__(self, sequences: _Optional[_Mapping[int, HloScheduleProto.InstructionSequence]] = ...) -> None: ...

class StackFrameIndexProto(_message.Message):
    __slots__ = ("file_names", "function_names", "file_locations", "stack_frames")
    class FileLocation(_message.Message):
        __slots__ = ("file_name_id", "function_name_id", "line", "end_line", "column", "end_column")
        FILE_NAME_ID_FIELD_NUMBER: _ClassVar[int]
        FUNCTION_NAME_ID_FIELD_NUMBER: _ClassVar[int]
        LINE_FIELD_NUMBER: _ClassVar[int]
        END_LINE_FIELD_NUMBER: _ClassVar[int]
        COLUMN_FIELD_NUMBER: _ClassVar[int]
        END_COLUMN_FIELD_NUMBER: _ClassVar[int]
        file_name_id: int
        function_name_id: int
        line: int
        end_line: int
        column: int
        end_column: int
        def __init__(self, file_name_id: _Optional[int] = ..., function_name_id: _Optional[int] = ..., line: _Optional[int] = ..., end_line: _Optional[int] = ..., column: _Optional[int] = ..., end_column: _Optional[int] = ...) -> None: ...
    class StackFrame(_message.Message):
        __slots__ = ("file_location_id", "parent_frame_id")
        FILE_LOCATION_ID_FIELD_NUMBER: _ClassVar[int]
        PARENT_FRAME_ID_FIELD_NUMBER: _ClassVar[int]
        file_location_id: int
        parent_frame_id: int
        def __init__(self, file_location_id: _Optional[int] = ..., parent_frame_id: _Optional[int] = ...) -> None: ...
    FILE_NAMES_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_NAMES_FIELD_NUMBER: _ClassVar[int]
    FILE_LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    STACK_FRAMES_FIELD_NUMBER: _ClassVar[int]
    file_names: _containers.RepeatedScalarFieldContainer[str]
    function_names: _containers.RepeatedScalarFieldContainer[str]
    file_locations: _containers.RepeatedCompositeFieldContainer[StackFrameIndexProto.FileLocation]
    stack_frames: _containers.RepeatedCompositeFieldContainer[StackFrameIndexProto.StackFrame]
    def __init__(self, file_names: _Optional[_Iterable[str]] = ..., function_names: _Optional[_Iterable[str]] = ..., file_locations: _Optional[_Iterable[_Union[StackFrameIndexProto.FileLocation, _Mapping]]] = ..., stack_frames: _Optional[_Iterable[_Union[StackFrameIndexProto.StackFrame, _Mapping]]] = ...) -> None: ...

class HloModuleProto(_message.Message):
    __slots__ = ("name", "entry_computation_name", "entry_computation_id", "computations", "host_program_shape", "id", "schedule", "is_dynamic", "spmd_output_sharding", "spmd_parameters_shardings", "use_auto_spmd_partitioning", "stack_frame_index", "frontend_attributes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENTRY_COMPUTATION_NAME_FIELD_NUMBER: _ClassVar[int]
    ENTRY_COMPUTATION_ID_FIELD_NUMBER: _ClassVar[int]
    COMPUTATIONS_FIELD_NUMBER: _ClassVar[int]
    HOST_PROGRAM_SHAPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    IS_DYNAMIC_FIELD_NUMBER: _ClassVar[int]
    SPMD_OUTPUT_SHARDING_FIELD_NUMBER: _ClassVar[int]
    SPMD_PARAMETERS_SHARDINGS_FIELD_NUMBER: _ClassVar[int]
    USE_AUTO_SPMD_PARTITIONING_FIELD_NUMBER: _ClassVar[int]
    STACK_FRAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    FRONTEND_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    entry_computation_name: str
    entry_computation_id: int
    computations: _containers.RepeatedCompositeFieldContainer[HloComputationProto]
    host_program_shape: _xla_data_pb2.ProgramShapeProto
    id: int
    schedule: HloScheduleProto
    is_dynamic: bool
    spmd_output_sharding: _xla_data_pb2.OpSharding
    spmd_parameters_shardings: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.OpSharding]
    use_auto_spmd_partitioning: bool
    stack_frame_index: StackFrameIndexProto
    frontend_attributes: _xla_data_pb2.FrontendAttributes
    def __init__(self, name: _Optional[str] = ..., entry_computation_name: _Optional[str] = ..., entry_computation_id: _Optional[int] = ..., computations: _Optional[_Iterable[_Union[HloComputationProto, _Mapping]]] = ..., host_program_shape: _Optional[_Union[_xla_data_pb2.ProgramShapeProto, _Mapping]] = ..., id: _Optional[int] = ..., schedule: _Optional[_Union[HloScheduleProto, _Mapping]] = ..., is_dynamic: bool = ..., spmd_output_sharding: _Optional[_Union[_xla_data_pb2.OpSharding, _Mapping]] = ..., spmd_parameters_shardings: _Optional[_Iterable[_Union[_xla_data_pb2.OpSharding, _Mapping]]] = ..., use_auto_spmd_partitioning: bool = ..., stack_frame_index: _Optional[_Union[StackFrameIndexProto, _Mapping]] = ..., frontend_attributes: _Optional[_Union[_xla_data_pb2.FrontendAttributes, _Mapping]] = ...) -> None: ...

class BufferAssignmentProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HloProto(_message.Message):
    __slots__ = ("hlo_module", "buffer_assignment")
    HLO_MODULE_FIELD_NUMBER: _ClassVar[int]
    BUFFER_ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    hlo_module: HloModuleProto
    buffer_assignment: BufferAssignmentProto
    def __init__(self, hlo_module: _Optional[_Union[HloModuleProto, _Mapping]] = ..., buffer_assignment: _Optional[_Union[BufferAssignmentProto, _Mapping]] = ...) -> None: ...

class HloSnapshot(_message.Message):
    __slots__ = ("hlo", "arguments", "result", "execution_platform")
    HLO_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_PLATFORM_FIELD_NUMBER: _ClassVar[int]
    hlo: HloProto
    arguments: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.LiteralProto]
    result: _xla_data_pb2.LiteralProto
    execution_platform: str
    def __init__(self, hlo: _Optional[_Union[HloProto, _Mapping]] = ..., arguments: _Optional[_Iterable[_Union[_xla_data_pb2.LiteralProto, _Mapping]]] = ..., result: _Optional[_Union[_xla_data_pb2.LiteralProto, _Mapping]] = ..., execution_platform: _Optional[str] = ...) -> None: ...

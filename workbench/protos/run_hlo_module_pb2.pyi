from workbench.protos import xla_data_pb2 as _xla_data_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunHloModuleIterationLiterals(_message.Message):
    __slots__ = ("arguments", "result", "reference_result")
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_RESULT_FIELD_NUMBER: _ClassVar[int]
    arguments: _containers.RepeatedCompositeFieldContainer[_xla_data_pb2.LiteralProto]
    result: _xla_data_pb2.LiteralProto
    reference_result: _xla_data_pb2.LiteralProto
    def __init__(self, arguments: _Optional[_Iterable[_Union[_xla_data_pb2.LiteralProto, _Mapping]]] = ..., result: _Optional[_Union[_xla_data_pb2.LiteralProto, _Mapping]] = ..., reference_result: _Optional[_Union[_xla_data_pb2.LiteralProto, _Mapping]] = ...) -> None: ...

class RunHloModuleLiterals(_message.Message):
    __slots__ = ("iterations",)
    ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    iterations: _containers.RepeatedCompositeFieldContainer[RunHloModuleIterationLiterals]
    def __init__(self, iterations: _Optional[_Iterable[_Union[RunHloModuleIterationLiterals, _Mapping]]] = ...) -> None: ...

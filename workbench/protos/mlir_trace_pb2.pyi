from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MlirCompilationTraceEntry(_message.Message):
    __slots__ = ("after_pass", "mlir_module")
    AFTER_PASS_FIELD_NUMBER: _ClassVar[int]
    MLIR_MODULE_FIELD_NUMBER: _ClassVar[int]
    after_pass: str
    mlir_module: str
    def __init__(self, after_pass: _Optional[str] = ..., mlir_module: _Optional[str] = ...) -> None: ...

class MlirCompilationTrace(_message.Message):
    __slots__ = ("passes",)
    PASSES_FIELD_NUMBER: _ClassVar[int]
    passes: _containers.RepeatedCompositeFieldContainer[MlirCompilationTraceEntry]
    def __init__(self, passes: _Optional[_Iterable[_Union[MlirCompilationTraceEntry, _Mapping]]] = ...) -> None: ...

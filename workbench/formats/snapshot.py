"""Read an `HloSnapshot` (`*.snapshot.N.pb`, `*.hlo_snapshot.pb`): the module XLA ran, the
arguments it was given and the result it produced, as numpy values.

Reading one holds its bytes, the decoded proto (about as large) and the arrays made from it
at once: a 400 MB snapshot would need 1.2 GB. The arrays' sizes are read from the shapes the
proto declares (`declared_bytes`, a walk over the wire format that decodes nothing else) and
the whole is checked against the memory limit (`sizes.memory_limit`) before anything is
decoded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from google.protobuf.message import DecodeError

from workbench.formats.hlo_proto import module_from_proto
from workbench.formats.literal import LiteralError, literal_from_proto, shape_from_proto
from workbench.hlo_ir import HloModule, LiteralValue
from workbench.model import Source
from workbench.protos import hlo_pb2, xla_data_pb2
from workbench.sizes import format_size, memory_limit
from workbench.sources import ReadError


@dataclass
class Snapshot:
    """One recorded execution. `module` is None when the snapshot carries no HLO (mlir_replay
    snapshots hold only arguments and result); `platform` is often empty in XLA's dumps."""

    file: str
    arguments: list[LiteralValue] = field(default_factory=list)
    result: LiteralValue | None = None
    platform: str = ""
    module_proto: bytes = b""  # the module's serialized `HloModuleProto`, empty when none

    @cached_property
    def module(self) -> HloModule | None:
        """The module XLA ran, made on first use: a replay reads its module from the dump's
        steps, and a training step's takes a third of a second to make. Raises ReadError."""
        if not self.module_proto:
            return None
        proto = hlo_pb2.HloModuleProto.FromString(self.module_proto)
        return module_from_proto(proto, self.file)


def read_snapshot(data: bytes, file: str) -> Snapshot:
    """Parse snapshot bytes. Raises ReadError naming the file and what is wrong with it, or
    the memory reading it needs when that exceeds the limit."""
    check_memory(data, file)
    try:
        proto = hlo_pb2.HloSnapshot.FromString(data)
    except DecodeError as error:
        raise ReadError(file, f"not an HloSnapshot (truncated or damaged?): {error}") from None
    has_module = bool(proto.hlo.hlo_module.computations)
    if not (has_module or proto.arguments or proto.HasField("result")):
        raise ReadError(file, "no module, arguments or result in this proto (not an HloSnapshot?)")
    arguments = []
    for index, argument in enumerate(proto.arguments):
        try:
            arguments.append(literal_from_proto(argument))
        except LiteralError as error:
            raise ReadError(file, f"argument {index}: {error}") from None
    result = None
    if proto.HasField("result"):
        try:
            result = literal_from_proto(proto.result)
        except LiteralError as error:
            raise ReadError(file, f"result: {error}") from None
    module = proto.hlo.hlo_module.SerializeToString() if has_module else b""
    return Snapshot(file, arguments, result, proto.execution_platform, module)


def check_size(path: Path, source: Source) -> None:
    """Raise ReadError when a snapshot file is too large to read within the memory limit
    whatever it holds (its bytes and their decoded proto), before reading it. A file that
    cannot be stat'ed is left to the read to report."""
    if source.start or source.end is not None or source.file.endswith(".gz"):
        return  # a byte range, or compressed: checked once read (`check_memory`)
    try:
        size = os.stat(path).st_size
    except OSError:
        return
    limit = memory_limit()
    if 2 * size > limit:
        raise ReadError(source.file, f"reading it needs at least {format_size(2 * size)} "
                                     f"(limit {format_size(limit)}); raise it with "
                                     "--memory-limit")


def check_memory(data: bytes | memoryview, file: str) -> None:
    """Raise ReadError when the bytes, the decoded proto and the arrays of a snapshot would
    exceed the memory limit together."""
    limit = memory_limit()
    arrays = declared_bytes(data)
    if arrays is None:
        return  # not a well-formed proto: decoding it says what is wrong
    needs = 2 * len(data) + arrays
    if needs > limit:
        raise ReadError(file, f"reading it needs {format_size(needs)} (limit "
                              f"{format_size(limit)}): its arguments and result are "
                              f"{format_size(arrays)}; raise it with --memory-limit")


def declared_bytes(data: bytes | memoryview) -> int | None:
    """Bytes of the arrays the snapshot's arguments and result declare (their shapes), read
    off the wire format without decoding the literals' data; None when the bytes are not a
    well-formed proto."""
    view = memoryview(data)
    total = 0
    try:
        for number, value in _fields(view):
            if number in (2, 3) and isinstance(value, memoryview):  # arguments, result
                shape = next((v for n, v in _fields(value) if n == 1), None)  # its shape
                if isinstance(shape, memoryview):
                    total += shape_from_proto(
                        xla_data_pb2.ShapeProto.FromString(bytes(shape))).nbytes
    except (ValueError, IndexError, DecodeError):
        return None
    return total


def _varint(view: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = view[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(view: memoryview) -> Iterator[tuple[int, memoryview | int]]:
    """The top-level fields of one message: (number, a memoryview for length-delimited
    fields, else the integer)."""
    at = 0
    value: memoryview | int
    while at < len(view):
        key, at = _varint(view, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(view, at)
        elif wire == 1:
            value, at = 0, at + 8
        elif wire == 5:
            value, at = 0, at + 4
        elif wire == 2:
            length, at = _varint(view, at)
            if at + length > len(view):
                raise ValueError("length past the end")
            value, at = view[at:at + length], at + length
        else:
            raise ValueError(f"wire type {wire}")
        if at > len(view):
            raise ValueError("field past the end")
        yield number, value

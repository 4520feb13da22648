"""Read an `HloSnapshot` (`*.snapshot.N.pb`, `*.hlo_snapshot.pb`): the module XLA ran, the
arguments it was given and the result it produced, as numpy values."""

from __future__ import annotations

from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from workbench.formats.hlo_proto import module_from_proto
from workbench.formats.literal import LiteralError, literal_from_proto
from workbench.hlo_ir import HloModule, LiteralValue
from workbench.protos import hlo_pb2
from workbench.sources import ReadError


@dataclass
class Snapshot:
    """One recorded execution. `module` is None when the snapshot carries no HLO (mlir_replay
    snapshots hold only arguments and result); `platform` is often empty in XLA's dumps."""

    module: HloModule | None
    arguments: list[LiteralValue] = field(default_factory=list)
    result: LiteralValue | None = None
    platform: str = ""


def read_snapshot(data: bytes, file: str) -> Snapshot:
    """Parse snapshot bytes. Raises ReadError naming the file and what is wrong with it."""
    try:
        proto = hlo_pb2.HloSnapshot.FromString(data)
    except DecodeError as error:
        raise ReadError(file, f"not an HloSnapshot (truncated or damaged?): {error}") from None
    has_module = bool(proto.hlo.hlo_module.computations)
    if not (has_module or proto.arguments or proto.HasField("result")):
        raise ReadError(file, "no module, arguments or result in this proto (not an HloSnapshot?)")
    module = module_from_proto(proto.hlo.hlo_module, file) if has_module else None
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
    return Snapshot(module=module, arguments=arguments, result=result,
                    platform=proto.execution_platform)

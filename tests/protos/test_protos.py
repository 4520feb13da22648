"""The generated proto modules read every proto XLA wrote in the corpus, and lose nothing the
workbench needs: the only fields they do not declare are ones it deliberately ignores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from workbench.protos import hlo_pb2, mlir_trace_pb2, xla_data_pb2

# Fields of XLA's messages left out of our subset on purpose (HloInstructionProto 82:
# statistics_viz; HloModuleProto 8 input_output_alias, 15 device_assignment, 18 buffer_donor).
IGNORED = {
    "workbench.xla.HloInstructionProto": {82},
    "workbench.xla.HloModuleProto": {8, 15, 18},
}


def _unknown_fields(message: Message, found: Counter) -> None:
    name = message.DESCRIPTOR.full_name
    if name == "workbench.xla.BufferAssignmentProto":
        return  # declared empty: everything in it is unknown by design
    for field in UnknownFieldSet(message):
        found[(name, field.field_number)] += 1
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None or descriptor.message_type.GetOptions().map_entry:
            continue
        for item in [value] if isinstance(value, Message) else value:
            _unknown_fields(item, found)


def _unexpected(found: Counter) -> dict:
    return {key: n for key, n in found.items() if key[1] not in IGNORED.get(key[0], set())}


def test_every_corpus_hlo_proto_parses_with_no_unexpected_fields(corpus: Path) -> None:
    files = sorted(corpus.glob("xla*/**/*.hlo.pb"))
    assert len(files) > 1000
    found: Counter = Counter()
    for path in files:
        proto = hlo_pb2.HloProto.FromString(path.read_bytes())
        module = proto.hlo_module
        assert module.name and module.name in path.name, path
        assert module.computations[-1].id == module.entry_computation_id, path
        _unknown_fields(proto, found)
    assert _unexpected(found) == {}


def test_every_corpus_snapshot_parses(corpus: Path) -> None:
    files = sorted(corpus.glob("**/*snapshot*.pb"))
    assert len(files) > 600
    found: Counter = Counter()
    with_module = 0
    for path in files:
        snapshot = hlo_pb2.HloSnapshot.FromString(path.read_bytes())
        assert snapshot.HasField("result"), path
        with_module += snapshot.hlo.hlo_module.name in path.name
        _unknown_fields(snapshot, found)
    assert _unexpected(found) == {}
    assert with_module >= len(files) - 2  # the two mlir-trace snapshots carry no HLO


@pytest.mark.parametrize("case", ["mlir-trace-clean", "mlir-trace-broken"])
def test_mlir_trace(corpus: Path, case: str) -> None:
    data = (corpus / "mlir" / case / "module_0000.jit_f.mlir-trace.pb").read_bytes()
    trace = mlir_trace_pb2.MlirCompilationTrace.FromString(data)
    assert len(trace.passes) == 10
    assert trace.passes[0].after_pass == "ConvertStableHloToIreeInputDialects"
    assert trace.passes[7].after_pass == "ConvertLinalgToLoopsPass"
    assert all("func.func" in entry.mlir_module for entry in trace.passes)
    found: Counter = Counter()
    _unknown_fields(trace, found)
    assert found == Counter()


def test_field_numbers_match_xla() -> None:
    """Spot checks against XLA's hlo.proto / xla_data.proto (the numbers are the wire format)."""

    def number(message: type[Message], field: str) -> int:
        return message.DESCRIPTOR.fields_by_name[field].number

    instruction = hlo_pb2.HloInstructionProto
    assert number(instruction, "operand_ids") == 36
    assert number(instruction, "called_computation_ids") == 38
    assert number(instruction, "comparison_direction") == 63
    assert number(instruction, "comparison_type") == 72
    assert number(instruction, "largest") == 85
    location = hlo_pb2.StackFrameIndexProto.FileLocation
    assert [number(location, f) for f in ("line", "column", "end_line", "end_column")] == [
        3, 4, 5, 6]
    assert number(hlo_pb2.HloModuleProto, "stack_frame_index") == 17
    assert number(xla_data_pb2.OpMetadata, "stack_frame_id") == 15
    assert number(xla_data_pb2.LiteralProto, "f8e8m0fnus") == 33
    assert xla_data_pb2.PrimitiveType.Value("F8E8M0FNU") == 33
    assert xla_data_pb2.PrimitiveType.Value("BF16") == 16

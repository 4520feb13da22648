"""Reading a snapshot is bounded by the memory limit: its bytes, the decoded proto and the
arrays it declares are counted before anything is decoded (a 400 MB snapshot peaked at 1.2 GB
under --memory-limit 100MB)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.formats.snapshot import declared_bytes
from workbench.protos import hlo_pb2, xla_data_pb2
from workbench.replay.processes import memory
from workbench.sources import READ_LIMIT_VARIABLE

MODULE = """HloModule big, entry_computation_layout={(f32[SIZE])->f32[SIZE]}

ENTRY main {
  x = f32[SIZE] parameter(0)
  ROOT y = f32[SIZE] negate(x)
}
"""


@pytest.fixture(autouse=True)
def no_limit_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limits the commands set in the environment are undone after each test."""
    monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.delenv(READ_LIMIT_VARIABLE, raising=False)


def literal(dims: tuple[int, ...], data: np.ndarray) -> xla_data_pb2.LiteralProto:
    proto = xla_data_pb2.LiteralProto()
    proto.shape.element_type = xla_data_pb2.F32
    proto.shape.dimensions.extend(dims)
    proto.shape.layout.minor_to_major.extend(range(len(dims) - 1, -1, -1))
    proto.f32s.extend(data.tolist())
    return proto


def dump(tmp_path: Path, elements: int, declared: int | None = None) -> Path:
    """A module negating f32[SIZE] and a snapshot of it whose argument holds `elements` values
    (and declares `declared`, by default as many)."""
    declared = elements if declared is None else declared
    root = tmp_path / "dump"
    root.mkdir()
    text = MODULE.replace("SIZE", str(declared))
    for step in ("before_optimizations", "cpu_after_optimizations"):
        (root / f"module_0001.big.{step}.txt").write_text(text)
    snapshot = hlo_pb2.HloSnapshot()
    data = np.ones(elements, np.float32)
    snapshot.arguments.append(literal((declared,), data))
    snapshot.result.CopyFrom(literal((declared,), -data))
    (root / "module_0001.big.snapshot.0.pb").write_bytes(snapshot.SerializeToString())
    return root


def replay_status(root: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    code = main(["replay", str(root), "big", "--execution", "snapshot.0", "--json", *options])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 2, (out, err)
    return err


def test_a_snapshot_larger_than_the_limit_allows_is_refused_before_it_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = dump(tmp_path, 3_000_000)  # 24 MB: two arrays of 12 MB
    err = replay_status(root, capsys, "--memory-limit", "40MB")
    assert "module_0001.big.snapshot.0.pb: reading it needs at least 45.8 MB (limit 40 MB)" \
        in err, err
    # Within a limit that holds it, it replays.
    assert main(["replay", str(root), "big", "--execution", "snapshot.0", "--json",
                 "--memory-limit", "200MB"]) == 0
    assert json.loads(capsys.readouterr().out)["recorded"]["ok"]


def test_the_arrays_a_snapshot_declares_are_counted_before_they_are_decoded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 100-byte snapshot that declares 400 MB of arrays."""
    root = dump(tmp_path, 4, declared=50_000_000)
    assert (root / "module_0001.big.snapshot.0.pb").stat().st_size < 200
    err = replay_status(root, capsys, "--memory-limit", "100MB")
    assert "reading it needs 381 MB (limit 100 MB): its arguments and result are 381 MB" in err


def test_declared_bytes_read_the_shapes_off_the_wire() -> None:
    snapshot = hlo_pb2.HloSnapshot()
    snapshot.arguments.append(literal((2, 3), np.zeros(6, np.float32)))
    snapshot.arguments.append(literal((1000,), np.zeros(1, np.float32)))
    snapshot.execution_platform = "cpu"
    data = snapshot.SerializeToString()
    assert declared_bytes(data) == (6 + 1000) * 4
    assert declared_bytes(data[:-3]) is None  # cut inside a field

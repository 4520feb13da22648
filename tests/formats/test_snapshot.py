"""Snapshot reader on every snapshot of the corpus, and on damaged copies."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from workbench.formats.snapshot import read_snapshot
from workbench.hlo_ir import LiteralValue, Shape, numpy_dtype
from workbench.loader import ReadError

LN_SNAPSHOT = "xla/layernorm/module_0010.jit_ln.snapshot.-17687811.pb"


def fits(value: LiteralValue, shape: Shape) -> bool:
    """The value has the dtype and dimensions of the shape (recursively for tuples)."""
    if shape.is_tuple:
        return isinstance(value, tuple) and len(value) == len(shape.tuple_shapes) and all(
            fits(v, s) for v, s in zip(value, shape.tuple_shapes, strict=True))
    return isinstance(value, np.ndarray) and value.dtype == numpy_dtype(shape.element_type) \
        and value.shape == shape.dims


def test_every_corpus_snapshot(corpus: Path) -> None:
    files = sorted(corpus.glob("**/*snapshot*.pb"))
    assert len(files) == 626
    dtypes: Counter = Counter()
    with_module = 0
    for path in files:
        snapshot = read_snapshot(path.read_bytes(), path.name)
        assert snapshot.result is not None
        for argument in snapshot.arguments:
            dtypes[str(argument.dtype)] += 1
        if snapshot.module is None:
            continue
        with_module += 1
        entry = snapshot.module.entry
        parameters = entry.parameters
        assert len(parameters) == len(snapshot.arguments), path.name
        for parameter, argument in zip(parameters, snapshot.arguments, strict=True):
            assert fits(argument, parameter.shape), (path.name, parameter.name)
        assert fits(snapshot.result, entry.root.shape), path.name
    assert with_module == 624
    assert {"float32", "int32", "bool", "float16", "uint32", "int8", "bfloat16", "uint16",
            "complex64", "int16"} <= set(dtypes)


def test_layernorm_arguments_and_result(corpus: Path) -> None:
    snapshot = read_snapshot((corpus / LN_SNAPSHOT).read_bytes(), LN_SNAPSHOT)
    x, g, b = snapshot.arguments
    # program.py: x = jnp.arange(48).reshape(6, 8) / 7.0, g = ones(8), b = zeros(8)
    assert x.dtype == np.float32
    assert np.allclose(x, np.arange(48).reshape(6, 8) / 7, rtol=1e-6, atol=0)
    assert np.array_equal(g, np.ones(8, np.float32)) and np.array_equal(b, np.zeros(8))
    mean = x.mean(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    assert np.allclose(snapshot.result, expected, atol=1e-5)
    assert snapshot.module is not None and snapshot.module.name == "jit_ln"


def test_mlir_trace_snapshot_has_no_module(corpus: Path) -> None:
    path = corpus / "mlir/mlir-trace-clean/module_0000.jit_f.snapshot.0.pb"
    snapshot = read_snapshot(path.read_bytes(), path.name)
    assert snapshot.module is None
    x, y = snapshot.arguments
    assert np.array_equal(x, np.ones((4, 8), np.float32))
    assert np.array_equal(y, (np.arange(64, dtype=np.float32) / 64).reshape(8, 8))
    expected = np.sum(np.tanh(x @ y + 1), axis=0) * 2
    assert np.allclose(snapshot.result, expected, rtol=1e-5)


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda data: data[: len(data) - 7], "truncated or damaged"),
    (lambda data: b"\x00" * 32, "truncated or damaged|no module, arguments or result"),
    (lambda data: b"garbage that is not a proto at all", "truncated or damaged|no module"),
])
def test_damaged_snapshots(corpus: Path, damage, reason: str) -> None:
    data = damage((corpus / LN_SNAPSHOT).read_bytes())
    with pytest.raises(ReadError, match=reason) as caught:
        read_snapshot(data, "bad.pb")
    assert caught.value.file == "bad.pb"


def test_argument_with_wrong_length(corpus: Path) -> None:
    from workbench.protos import hlo_pb2

    proto = hlo_pb2.HloSnapshot.FromString((corpus / LN_SNAPSHOT).read_bytes())
    del proto.arguments[1].f32s[-1]
    with pytest.raises(ReadError, match="argument 1: f32 literal has 7 values, its shape needs 8"):
        read_snapshot(proto.SerializeToString(), "short.pb")


def test_a_damaged_module_is_found_when_it_is_made(corpus: Path, tmp_path: Path) -> None:
    """The module a snapshot carries is made on first use (a replay reads its module from the
    dump's steps): an operand id that resolves nowhere leaves the arguments and result
    readable, raises when the module is made, and `check` names the file."""
    from workbench.check import check_dump
    from workbench.index import scan
    from workbench.protos import hlo_pb2

    proto = hlo_pb2.HloSnapshot.FromString((corpus / LN_SNAPSHOT).read_bytes())
    instruction = next(i for c in proto.hlo.hlo_module.computations for i in c.instructions
                       if i.operand_ids)
    instruction.operand_ids[0] = 987654
    data = proto.SerializeToString()
    snapshot = read_snapshot(data, "cut.pb")
    assert len(snapshot.arguments) == 3 and snapshot.result is not None
    with pytest.raises(ReadError) as caught:
        snapshot.module  # noqa: B018
    assert caught.value.file == "cut.pb"

    name = Path(LN_SNAPSHOT).name
    (tmp_path / name).write_bytes(data)
    for path in (corpus / LN_SNAPSHOT).parent.glob("module_0010.jit_ln.*after_optimizations*"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    problems = {p.file: p.reason for p in check_dump(scan(tmp_path))}
    assert list(problems) == [name] and "987654" in problems[name]

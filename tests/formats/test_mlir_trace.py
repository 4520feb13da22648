"""mlir_replay traces of the corpus: one module of 10 MLIR steps with its snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from workbench.formats.mlir_trace import parse_trace
from workbench.index import scan
from workbench.loader import ReadError, read_text

PASSES = [
    "ConvertStableHloToIreeInputDialects", "CanonicalizerPass", "CSEPass",
    "LinalgGeneralizeNamedOpsPass", "LinalgElementwiseOpFusionPass", "CanonicalizerPass",
    "OneShotBufferizePass", "ConvertLinalgToLoopsPass", "CanonicalizerPass", "CSEPass",
]
TRACE = "module_0000.jit_f.mlir-trace.pb"


@pytest.mark.parametrize("case", ["mlir-trace-clean", "mlir-trace-broken"])
def test_trace_folder_is_one_module_of_ten_steps(corpus: Path, case: str) -> None:
    folder = corpus / "mlir" / case
    dump = scan(folder)
    assert dump.problems == []
    (module,) = dump.modules
    assert (module.id, module.name, module.format) == ("module_0000", "jit_f", "mlir-trace")
    assert [s.pass_name for s in module.steps] == PASSES
    assert all(s.ir == "mlir" and s.kind == "pass" for s in module.steps)
    assert [s.text.entry for s in module.steps] == list(range(10))
    assert {s.scope for s in module.steps} == {"builtin.module @jit_f"}
    (execution,) = module.executions
    assert execution.file == "module_0000.jit_f.snapshot.0.pb"
    text = read_text(folder, module.steps[7].text)
    assert "scf.for" in text and "module @jit_f" in text


def test_broken_trace_differs_from_pass_seven_on(corpus: Path) -> None:
    clean, broken = (scan(corpus / "mlir" / c).modules[0] for c in
                     ("mlir-trace-clean", "mlir-trace-broken"))
    root = {id(clean): corpus / "mlir" / "mlir-trace-clean",
            id(broken): corpus / "mlir" / "mlir-trace-broken"}
    same = [read_text(root[id(clean)], a.text) == read_text(root[id(broken)], b.text)
            for a, b in zip(clean.steps, broken.steps, strict=True)]
    assert same == [True] * 7 + [False] * 3


def test_text_proto_trace(corpus: Path, tmp_path: Path) -> None:
    data = (corpus / "mlir" / "mlir-trace-clean" / TRACE).read_bytes()
    trace = parse_trace(data, TRACE)
    (tmp_path / "module_0003.jit_f.mlir-trace.txt").write_text(text_format.MessageToString(trace))
    dump = scan(tmp_path)
    (module,) = dump.modules
    assert module.format == "mlir-trace"
    assert [s.pass_name for s in module.steps] == PASSES
    assert read_text(tmp_path, module.steps[9].text) == trace.passes[9].mlir_module


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_bad_trace_is_a_problem(corpus: Path, tmp_path: Path, damage: str) -> None:
    data = (corpus / "mlir" / "mlir-trace-clean" / TRACE).read_bytes()
    bad = {"truncate": data[: len(data) // 2], "garbage": b"\xff" * 64, "empty": b""}[damage]
    (tmp_path / TRACE).write_bytes(bad)
    dump = scan(tmp_path)
    (module,) = dump.modules
    assert module.steps == []
    assert [p.file for p in dump.problems] == [TRACE]
    with pytest.raises(ReadError):
        parse_trace(bad, TRACE)


def test_trace_entry_that_is_not_utf8_is_a_read_error(corpus: Path, tmp_path: Path) -> None:
    """A damaged byte in an entry's IR: the trace's strings are proto2 `string`s, which the
    decoder does not check, so it hands the entry back as bytes instead of failing."""
    data = (corpus / "mlir" / "mlir-trace-clean" / TRACE).read_bytes()
    first = parse_trace(data, TRACE).passes[0].mlir_module.encode()
    at = data.index(first) + 10
    bad = data[:at] + b"\xff" + data[at + 1 :]
    with pytest.raises(ReadError, match=r"pass 0: mlir_module is not UTF-8 text \(bad byte at "
                                        r"offset 10 of it"):
        parse_trace(bad, TRACE)
    (tmp_path / TRACE).write_bytes(bad)
    dump = scan(tmp_path)
    assert dump.modules[0].steps == []
    assert [(p.file, "not UTF-8" in p.reason) for p in dump.problems] == [(TRACE, True)]

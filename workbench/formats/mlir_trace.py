"""mlir_replay compilation traces (`module_NNNN[.name].mlir-trace.pb`, or `.txt` text proto).

An `MlirCompilationTrace` holds the printed module after each pass. The XLA name claimer
records the file as an artifact of module `module_NNNN`, whose snapshots
(`module_NNNN.<name>.snapshot.N.pb`) are the executions mlir_replay runs against it; the
expander turns the trace's entries into MLIR steps of that module, each pointing at its entry
with `Source(file, entry=i)`. The entry reader registered in `sources.ENTRY_READERS` gives the
text of one entry back.
"""

from __future__ import annotations

from functools import lru_cache

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from workbench.formats.mlir_text import scope_of_text
from workbench.model import Dump, Problem, Source, Step
from workbench.protos.mlir_trace_pb2 import MlirCompilationTrace
from workbench.sources import ENTRY_READERS, ReadError, decode_text, read_bytes

TRACE_SUFFIXES = (".mlir-trace.pb", ".mlir-trace.txt", ".mlir-trace.pbtxt")
_SCOPE_PEEK = 64 * 1024


@lru_cache(maxsize=4)
def parse_trace(data: bytes, file: str) -> MlirCompilationTrace:
    """Parse a trace, binary or text proto by the file's suffix; raises `ReadError`."""
    trace = MlirCompilationTrace()
    if not data:
        raise ReadError(file, "empty file (still being written?)")
    try:
        if file.endswith(".pb"):
            trace.ParseFromString(data)
        else:
            text_format.Parse(decode_text(data, file), trace)
    except (DecodeError, text_format.ParseError) as error:
        raise ReadError(file, f"not an MlirCompilationTrace proto: {error}") from None
    if not trace.passes:
        raise ReadError(file, "MlirCompilationTrace holds no pass")
    for index, entry in enumerate(trace.passes):
        # Its strings are proto2 `string`s: the decoder does not check their UTF-8 and gives
        # a damaged one back as `bytes`.
        for name in ("after_pass", "mlir_module"):
            value = getattr(entry, name)
            if isinstance(value, bytes):
                raise ReadError(file, f"pass {index}: {name} is {_not_text(value)} "
                                      "(truncated or damaged?)")
    return trace


def _not_text(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not UTF-8 text (bad byte at offset {error.start} of it)"
    return "not text"


def read_trace_entry(data: bytes, entry: int, file: str) -> str:
    """The printed module after the `entry`-th pass of the trace in `data`."""
    passes = parse_trace(data, file).passes
    if not 0 <= entry < len(passes):
        raise ReadError(file, f"the trace has {len(passes)} passes, no entry {entry}")
    return passes[entry].mlir_module


for _suffix in TRACE_SUFFIXES:
    ENTRY_READERS[_suffix] = read_trace_entry


def trace_steps(data: bytes, file: str, first_index: int = 0) -> list[Step]:
    """One step per trace entry, numbered from `first_index`; raises `ReadError`."""
    steps = []
    for i, entry in enumerate(parse_trace(data, file).passes):
        steps.append(Step(
            index=first_index + i,
            pass_name=entry.after_pass or f"pass {i}",
            ir="mlir",
            kind="pass",
            text=Source(file, entry=i),
            scope=scope_of_text(entry.mlir_module[:_SCOPE_PEEK]),
            pipeline="mlir-trace",
        ))
    return steps


def expand_mlir_traces(dump: Dump) -> None:
    """Add the steps of each module's mlir-trace artifacts after its other steps; a module
    with no HLO step is then of format "mlir-trace"."""
    for module in dump.modules:
        traces = [a.file for a in module.artifacts if a.kind == "mlir-trace"]
        if not traces:
            continue
        for file in traces:
            try:
                steps = trace_steps(read_bytes(dump.root, Source(file)), file,
                                    len(module.steps))
            except ReadError as error:
                dump.problems.append(Problem(error.file, error.reason))
                continue
            module.steps.extend(steps)
        if module.format == "xla" and not module.ir_steps("hlo") and module.steps:
            module.format = "mlir-trace"

"""Every reader on damaged copies of real corpus files: it returns, or raises what it documents
(`ReadError` and its subclasses; the MLIR replay parser `MlirParseError` or `Unsupported`),
never anything else.

The damages (tests/helpers/damage.py) are drawn by hypothesis, derandomized, with a small
budget for the default run; the `slow` variant draws many more. Deterministic sweeps cut each
file inside every UTF-8 character and protobuf varint it has (up to a bound).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.helpers.damage import Damage, damaged, utf8_inner_offsets, varint_inner_offsets
from workbench.diff.normalize import normalize
from workbench.formats.action_log import (
    chrome_trace,
    filter_actions,
    pass_runs,
    read_action_log,
)
from workbench.formats.crash_reproducer import read_crash_reproducer
from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.iree_replay import parse_replay_jsonl
from workbench.formats.mlir_files import sniff
from workbench.formats.mlir_print_ir import dumps_to_steps, module_name, scan_print_ir
from workbench.formats.mlir_reports import (
    apply_timing,
    find_reports,
    join_statistics,
    render_timing_rows,
)
from workbench.formats.mlir_text import scope_of_text
from workbench.formats.mlir_trace import read_trace_entry, trace_steps
from workbench.formats.snapshot import read_snapshot
from workbench.loader import ReadError, decode_text
from workbench.output.json_shapes import action_json
from workbench.replay.errors import MlirParseError, Unsupported
from workbench.stats import ir_stats

CORPUS = Path(__file__).parent.parent / "data" / "corpus"
DATA = CORPUS.parent
LN = "xla/layernorm/module_0010.jit_ln"
LOOPS = "mlir/iree-opt-to-loops"
TRACE = "mlir/mlir-trace-clean/module_0000.jit_f"


def _text(data: bytes) -> str:
    """What a text reader sees of damaged bytes: the loader refuses non-UTF-8 files, but
    readers that decode leniently (reports, scopes) get replacement characters."""
    return data.decode("utf-8", "replace")


def read_hlo_text(data: bytes, file: str) -> None:
    text = _text(data)
    parse_hlo_text(text, file)
    normalize(text, "hlo")
    ir_stats(text, "hlo")


def read_proto(data: bytes, file: str) -> None:
    read_hlo_proto(data, file)


def read_snapshot_file(data: bytes, file: str) -> None:
    read_snapshot(data, file)


def read_trace(data: bytes, file: str) -> None:
    steps = trace_steps(data, file)
    for step in steps:
        assert step.text is not None and step.text.entry is not None
        read_trace_entry(data, step.text.entry, file)


def read_print_ir(data: bytes, file: str) -> None:
    log = scan_print_ir(data, file)
    steps = dumps_to_steps(log)
    module_name(steps)
    reports = find_reports(_text(data), file)
    apply_timing(steps, reports)
    for report in reports.statistics:
        join_statistics(steps, report)
    for step in steps[:3]:
        assert step.text is not None
        piece = _text(data[step.text.start : step.text.end])
        normalize(piece, "mlir")
        ir_stats(piece, "mlir")


def read_reports(data: bytes, file: str) -> None:
    reports = find_reports(_text(data), file)
    for report in reports.timing:
        render_timing_rows(report)


def read_actions(data: bytes, file: str) -> None:
    log = read_action_log(data, file)
    pass_runs(log)
    chrome_trace(log, filter_actions(log.actions, tag="apply-*", pass_name="*Canon*"))
    for action in log.actions[:200]:
        action_json(action)
        assert action.target is None or isinstance(action.target, str)


def read_reproducer(data: bytes, file: str) -> None:
    read_crash_reproducer(data, file)


def read_mlir_text(data: bytes, file: str) -> None:
    """How the index sniffs an MLIR file and names its scope, then the replay's parser."""
    from workbench.replay.mlir.parse import parse_module

    sniff(data[:32768], data[-4096:], ".mlir")
    text = _text(data)
    scope_of_text(text)
    normalize(text, "mlir")
    parse_module(text, file)


def read_replay_jsonl(data: bytes, file: str) -> None:
    dump = parse_replay_jsonl(_text(data).splitlines(), file)
    for record in dump.records:
        record.details()


def read_utf8_text(data: bytes, file: str) -> None:
    """A text artifact that holds multibyte characters, as the loader and the diff read it."""
    normalize(decode_text(data, file), "text")


@dataclass(frozen=True)
class Family:
    """A reader, the real files it reads, what it may raise, and which damages matter."""

    name: str
    read: Callable[[bytes, str], None]
    files: tuple[str, ...]
    raises: tuple[type[BaseException], ...] = (ReadError,)
    text: bool = True
    proto: bool = False


FAMILIES = [
    Family("hlo-text", read_hlo_text, (
        f"{LN}.before_optimizations.txt", f"{LN}.cpu_after_optimizations.txt",
        "xla/fori_loop/module_0002.jit_f.before_optimizations.txt")),
    Family("hlo-proto", read_proto, (
        f"{LN}.before_optimizations.hlo.pb", f"{LN}.cpu_after_optimizations.hlo.pb",
        "xla/mlp/module_0004.jit__normal.before_optimizations.hlo.pb"),
        text=False, proto=True),
    Family("snapshot", read_snapshot_file, (
        "xla/layernorm/module_0010.jit_ln.snapshot.-17687811.pb",
        f"{TRACE}.snapshot.0.pb",
        "xla/int_ops/module_0008.jit_f.snapshot.-463493833.pb"),
        text=False, proto=True),
    Family("mlir-trace", read_trace, (f"{TRACE}.mlir-trace.pb",), text=False, proto=True),
    Family("print-ir", read_print_ir, (
        f"{LOOPS}/print-ir-after-change.log", "mlir/crash-reproducer/print-ir-after-failure.log"),
        raises=()),
    Family("reports", read_reports, (
        "mlir/iree-opt-list-reports/reports-list.log",
        "mlir/iree-opt-list-reports/timing-threaded.log"), raises=()),
    Family("action-log", read_actions, (f"{LOOPS}/actions.log",)),
    Family("crash-reproducer", read_reproducer, ("mlir/crash-reproducer/reproducer.mlir",)),
    Family("mlir-text", read_mlir_text, (
        f"{LOOPS}/input.mlir", f"{LOOPS}/output.mlir", f"{LN}/module.mlir"),
        raises=(MlirParseError, Unsupported)),
    Family("iree-replay-jsonl", read_replay_jsonl, ("../iree-dump-replay/jit_f.jsonl",)),
    Family("utf8-text", read_utf8_text, (
        f"{LN}.cpu_after_optimizations-live-range.txt",)),
]
BUDGETS = [pytest.param(100, id="quick"),
           pytest.param(1500, id="extended", marks=pytest.mark.slow)]


@cache
def original(relative: str) -> bytes:
    return (CORPUS / relative).read_bytes()


def check(family: Family, file: str, damage: Damage) -> None:
    """Read the damaged bytes; anything but what the reader documents fails the test."""
    with contextlib.suppress(*family.raises):
        family.read(damage.data, Path(file).name)


def test_every_family_reads_its_real_files() -> None:
    """The readers read the undamaged files without error (else the fuzzing proves little)."""
    for family in FAMILIES:
        for file in family.files:
            family.read(original(file), Path(file).name)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_damaged_copies(family: Family, budget: int) -> None:
    @settings(max_examples=budget, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def run(data: st.DataObject) -> None:
        file = data.draw(st.sampled_from(family.files), label="file")
        damage = data.draw(damaged(original(file), text=family.text, proto=family.proto))
        note(f"{file}: {damage.what}")
        check(family, file, damage)

    run()


def _spread(offsets: tuple[int, ...], count: int) -> list[int]:
    """At most `count` of `offsets`, evenly spread."""
    step = max(1, len(offsets) // count)
    return list(offsets[::step])


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.proto], ids=lambda f: f.name)
def test_cut_inside_every_varint(family: Family) -> None:
    for file in family.files:
        data = original(file)
        offsets = varint_inner_offsets(data)
        assert offsets, file
        for at in _spread(offsets, 150):
            check(family, file, Damage(f"cut at {at}", data[:at]))


def test_cut_inside_utf8_characters() -> None:
    """A text file cut inside a multibyte character is named as such: a file still being
    written, not a text in another encoding."""
    (family,) = [f for f in FAMILIES if f.name == "utf8-text"]
    (file,) = family.files
    data = original(file)
    offsets = utf8_inner_offsets(data)
    assert len(offsets) > 10
    for at in offsets:
        with pytest.raises(ReadError, match=r"ends inside a UTF-8 character"):
            family.read(data[:at], Path(file).name)

"""`workbench mlir-replay`: XLA's `mlir_replay`, in Python, on the workbench's replay machinery.

Same flags and the same output on stdout as `mlir_replay`: for each pass of an
`MlirCompilationTrace`, `Running IR after <pass>.`, then `Results:` and one line per result
in the MLIR interpreter's format (`TensorOrMemref<8xf32>: [1, 2, ...]`), only when the
results changed with `--print-changes-only`. Without `--hlo-snapshot` the inputs are seeded
random data (or `--inputs a.npy b.npy`). What `mlir_replay` writes to stderr goes to stderr
here too: steps that fail to evaluate, and, beyond it, each step whose result differs from
the reference (the first pass's) beyond tolerance, and a closing verdict naming the first
pass whose result differs. `--stop-after-first-failure` stops after the first step that
fails to evaluate or differs.

`--mlir-compilation-trace-dir DIR` checks every `*.mlir-trace.pb` in DIR against its
snapshots (`<prefix>*.snapshot.*`): like `mlir_replay`, whether the first pass reproduces the
recorded result, and beyond it, by bisection, whether a later pass changes the result. It lists
the failing traces with the command that replays each.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.commands.limits import add_memory_limit_argument, time_limit_seconds
from workbench.hlo_ir import LiteralValue
from workbench.model import Execution, Module
from workbench.replay.judge.outcome import Kind

TRACE_SUFFIX = ".mlir-trace.pb"


class UsageError(Exception):
    """Bad arguments or unreadable inputs: `workbench mlir-replay: message`, exit 2."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mlir-replay", help="replay an MlirCompilationTrace pass by pass (XLA's mlir_replay)",
        description="Interpret the IR after each pass of an MlirCompilationTrace on an HLO "
        "snapshot's inputs and show where the result changes, like XLA's mlir_replay. Exit "
        "status 1 when a pass changes the result (or the first pass does not reproduce the "
        "recorded one).")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--mlir-compilation-trace", type=Path, metavar="FILE",
                        help="an MlirCompilationTrace proto (.mlir-trace.pb)")
    source.add_argument("--mlir-compilation-trace-dir", type=Path, metavar="DIR",
                        help="check every *.mlir-trace.pb in DIR against its snapshots and list "
                        "the failing ones")
    parser.add_argument("--hlo-snapshot", type=Path, metavar="FILE",
                        help="an HloSnapshot proto: its arguments are the inputs, its result is "
                        "checked against the first pass's (default: seeded random inputs)")
    parser.add_argument("--inputs", nargs="+", type=Path, metavar="FILE.npy",
                        help="evaluate on these arrays instead (one .npy file per parameter)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random inputs used without a snapshot (default 0)")
    parser.add_argument("--entry-point", metavar="NAME",
                        help="the function to run (default: main, else the only function)")
    parser.add_argument("--print-changes-only", action="store_true",
                        help="print a pass's results only when they differ from the last printed")
    parser.add_argument("--stop-after-first-failure", action="store_true",
                        help="stop after the first pass that fails to evaluate or differs")
    parser.add_argument("--atol", type=float, metavar="X", help="absolute tolerance (all dtypes)")
    parser.add_argument("--rtol", type=float, metavar="Y", help="relative tolerance (all dtypes)")
    parser.add_argument("--time-limit", type=time_limit_seconds, metavar="SECONDS",
                        help="stop any one pass's evaluation after this long (0: no limit)")
    add_memory_limit_argument(parser)
    parser.add_argument("--json", action="store_true",
                        help="machine-readable output (per pass, or per trace with -dir)")
    parser.set_defaults(func=run)


# --------------------------------------------------------------------------- value printing

_TYPE_NAMES = {"bool": "i1", "bfloat16": "bf16", "complex64": "complex<f32>",
               "complex128": "complex<f64>"}


def type_name(dtype: np.dtype) -> str:
    """The element type as the MLIR interpreter prints it (`f32`, `i32`, `ui8`, `i1`)."""
    name = dtype.name
    if name in _TYPE_NAMES:
        return _TYPE_NAMES[name]
    for prefix, short in (("float", "f"), ("uint", "ui"), ("int", "i")):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return short + name[len(prefix):]
    return name


def _scalar_text(value: Any) -> str:
    if isinstance(value, np.bool_ | bool):
        return "true" if value else "false"
    if isinstance(value, np.complexfloating | complex):
        imaginary = f"{value.imag:g}"
        return f"{value.real:g}{'' if imaginary.startswith('-') else '+'}{imaginary}i"
    if isinstance(value, np.integer | int):
        return str(int(value))
    return f"{float(value):g}"


def _nested_text(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _scalar_text(array[()])
    return "[" + ", ".join(_nested_text(part) for part in array) + "]"


def format_value(value: LiteralValue) -> str:
    """One result as the MLIR interpreter prints it: `TensorOrMemref<2x3xf32>: [[...]]`."""
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(part) for part in value) + ")"
    array = np.asarray(value)
    shape = "".join(f"{size}x" for size in array.shape)
    return f"TensorOrMemref<{shape}{type_name(array.dtype)}>: {_nested_text(array)}"


def results_lines(value: LiteralValue) -> list[str]:
    """The lines after `Results:`: one per result of the entry function."""
    parts = value if isinstance(value, tuple) else (value,)
    return [format_value(part) for part in parts]


# --------------------------------------------------------------------------------- one trace


@dataclass
class TraceModule:
    """A trace file as a module of the workbench's model, rooted at the trace's folder."""

    root: Path
    module: Module


def trace_module(path: Path) -> TraceModule:
    """The trace as the index reads it (one module, its passes as steps)."""
    from workbench.index import file_module
    from workbench.sources import ReadError

    try:
        return TraceModule(path.parent, file_module(path))
    except ReadError as error:
        raise UsageError(str(error)) from None


def _snapshot_execution(root: Path, snapshot: Path) -> Execution:
    return Execution(snapshot.name, os.path.relpath(snapshot, root), "hlo-snapshot")


def open_trace_replay(args: argparse.Namespace, trace: Path, snapshot: Path | None,
                      keep_values: bool) -> Any:
    """The `Replay` of a trace on a snapshot's, .npy or random inputs; raises `UsageError`."""
    from workbench.loader import ReadError
    from workbench.replay.inputs import InputError, InputSpec, resolve_inputs
    from workbench.replay.mlir.backend import MlirBackend
    from workbench.replay.steps import Replay, make_runner

    opened = trace_module(trace)
    backend = MlirBackend(opened.root, opened.module, entry_point=args.entry_point)
    execution = None if snapshot is None else _snapshot_execution(opened.root, snapshot)
    npy = tuple(args.inputs or ())
    spec = InputSpec(npy, fake_data=execution is None and not npy, seed=args.seed)
    try:
        inputs = resolve_inputs(backend, None if npy else execution, spec)
    except (InputError, ReadError) as error:
        raise UsageError(f"cannot get the inputs: {error}") from None
    return Replay(backend, inputs, atol=args.atol, rtol=args.rtol,
                  runner=make_runner(args.time_limit), keep_values=keep_values)


def replay_trace(args: argparse.Namespace) -> int:
    from workbench.replay.judge.compare import results_equal
    from workbench.replay.processes.workers import Cancelled
    from workbench.replay.steps import StepResult

    if args.hlo_snapshot is not None and args.inputs:
        raise UsageError("give the inputs by --hlo-snapshot or by --inputs, not both")
    replay = open_trace_replay(args, args.mlir_compilation_trace, args.hlo_snapshot,
                               keep_values=True)
    printed: list[LiteralValue] = []

    def show(result: StepResult) -> None:
        if args.json:
            return
        print(f"Running IR after {result.step.pass_name}.", flush=True)
        value = result.value if result.position else replay.reference_value
        if value is None:
            print(result.status, file=sys.stderr, flush=True)
            return
        if not args.print_changes_only or not printed or not results_equal(printed[-1], value):
            print("Results:")
            for line in results_lines(value):
                print(line)
            print(flush=True)
            printed[:] = [value]
        if result.kind == Kind.MISMATCH and result.comparison is not None:
            print(f"Mismatch after {result.step.pass_name}: {result.comparison.summary}",
                  file=sys.stderr, flush=True)
        result.value = None

    try:
        with replay:
            results = replay.run(on_result=show,
                                 stop_after_first_failure=args.stop_after_first_failure)
    except Cancelled:
        return 130
    first_failure = next((r for r in results if r.kind != Kind.OK), None)
    culprit = next((r for r in results if r.kind == Kind.MISMATCH), None)
    recorded = replay.recorded_comparison
    failed = culprit is not None or (recorded is not None and not recorded.ok)
    if args.json:
        from workbench.output.json_shapes import mlir_replay_json

        json.dump(mlir_replay_json(str(args.mlir_compilation_trace), replay.inputs.origin,
                                   len(replay.steps), recorded, culprit, results,
                                   replay.shadow_evaluations), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        counts = {kind: sum(1 for r in results if r.kind == kind) for kind in Kind}
        lines = [f"{len(results)} of {len(replay.steps)} passes replayed on "
                 f"{replay.inputs.origin}: " + ", ".join(f"{n} {k}" for k, n in counts.items())]
        if recorded is not None:
            lines.append(f"recorded result vs the first pass: {recorded.summary}")
        if culprit is not None:
            lines.append(f"first pass whose result differs: {culprit.step.pass_name} "
                         f"(pass {culprit.step.index})")
        elif first_failure is None:
            lines.append("no pass changes the result")
        print("\n".join(lines), file=sys.stderr)
    stopped_on_error = (args.stop_after_first_failure and first_failure is not None
                        and first_failure.kind in (Kind.ERROR, Kind.UNSUPPORTED))
    return 1 if failed or stopped_on_error else 0


# ------------------------------------------------------------------------------ a directory


def snapshots_of(trace: Path) -> list[Path]:
    prefix = trace.name.removesuffix(TRACE_SUFFIX)
    return sorted(path for path in trace.parent.glob(f"{prefix}*.snapshot.*") if path.is_file())


def replay_command(trace: Path, snapshot: Path, entry_point: str | None) -> str:
    words = ["workbench", "mlir-replay", f"--mlir-compilation-trace={trace}",
             f"--hlo-snapshot={snapshot}", "--print-changes-only", "--stop-after-first-failure"]
    if entry_point:
        words.append(f"--entry-point={entry_point}")
    return shlex.join(words)


def check_directory(args: argparse.Namespace) -> int:
    from workbench.output.json_shapes import mlir_trace_check_json
    from workbench.output.progress import Progress, wanted
    from workbench.replay.bisect import bisect_replay

    folder: Path = args.mlir_compilation_trace_dir
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a folder")
    if args.hlo_snapshot is not None or args.inputs:
        raise UsageError("with --mlir-compilation-trace-dir the snapshots are found next to "
                         "each trace: --hlo-snapshot and --inputs do not apply")
    traces = sorted(folder.glob(f"*{TRACE_SUFFIX}"))
    report: list[dict[str, Any]] = []
    snapshots_by_trace = {trace: snapshots_of(trace) for trace in traces}
    total = sum(len(snapshots) for snapshots in snapshots_by_trace.values())
    with Progress("mlir-replay", total, wanted(args.json), unit="snapshots") as progress:
        for trace, snapshots in snapshots_by_trace.items():
            if not snapshots:
                report.append(mlir_trace_check_json(str(trace), None, None, None,
                                                    "no snapshot found for this trace"))
                continue
            for snapshot in snapshots:
                command = replay_command(trace, snapshot, args.entry_point)
                try:
                    with open_trace_replay(args, trace, snapshot, keep_values=False) as replay:
                        verdict = bisect_replay(replay)
                except UsageError as error:
                    report.append(mlir_trace_check_json(str(trace), str(snapshot), command,
                                                        None, str(error)))
                else:
                    report.append(mlir_trace_check_json(str(trace), str(snapshot), command,
                                                        verdict, None))
                progress.advance(failed=report[-1]["status"] != Kind.OK)
    failing = [entry for entry in report if entry["status"] != Kind.OK]
    if args.json:
        json.dump({"traces": report}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 1 if failing else 0
    for trace in traces:
        entries = [entry for entry in failing if entry["trace"] == str(trace)]
        if not entries:
            continue
        print(f"Failures for {trace}:")
        for entry in entries:
            where = f"{Path(entry['snapshot']).name}: " if entry["snapshot"] else ""
            print(f"  {where}{entry['status']}: {entry['detail']}")
            if entry["command"]:
                print(f"  run: {entry['command']}")
    checked = len({entry["trace"] for entry in report})
    print(f"{len({e['trace'] for e in failing})} of {checked} traces fail "
          f"({len(report)} snapshot replays).")
    return 1 if failing else 0


def run(args: argparse.Namespace) -> int:
    try:
        if args.mlir_compilation_trace_dir is not None:
            return check_directory(args)
        return replay_trace(args)
    except UsageError as error:
        print(f"workbench mlir-replay: {error}", file=sys.stderr)
        return 2

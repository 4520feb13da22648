"""`workbench iree FILE`: inspect an IREE HAL replay capture, or replay it.

Exit status: 0 success; 1 the IREE tool failed (its message is printed verbatim), ran out of
time or was interrupted; 2 bad arguments (no such file, malformed FROM=TO, an executable id
the capture does not have); 3 the IREE runtime tools are not installed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.external_tools import ToolMissing
from workbench.formats.iree_replay import ReplayDump, ReplayRecord, read_replay
from workbench.output.json_shapes import (
    iree_error_json,
    iree_records_json,
    iree_replay_json,
    iree_summary_json,
    print_json,
)
from workbench.replay.iree_runner import (
    DEFAULT_DEVICE,
    DEFAULT_TIMEOUT_S,
    ReplayOptions,
    check_substitutions,
    split_assignment,
    start_replay,
)
from workbench.sources import ReadError

EXIT_FAILED, EXIT_USAGE, EXIT_NO_TOOLS = 1, 2, 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "iree", help="inspect or replay an IREE HAL replay capture (.ireereplay)",
        description="Summarize an .ireereplay capture (iree-dump-replay), list its records, "
        "or replay it (iree-run-replay). Needs the IREE runtime tools: "
        "pip install 'dump-triage-workbench[iree]'.")
    parser.add_argument("file", type=Path, help="the .ireereplay capture")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    records = parser.add_argument_group("records")
    records.add_argument("--records", action="store_true", help="list the capture's records")
    records.add_argument("--kind", help="only records of this kind (operation, object, ...)")
    records.add_argument("--operation",
                         help="only this operation (device.queue_execute) or family (device)")
    records.add_argument("--scope", help="only records inside this replay scope (execute)")
    replay = parser.add_argument_group("replay")
    replay.add_argument("--replay", action="store_true", help="replay the capture")
    replay.add_argument("--device", default=DEFAULT_DEVICE,
                        help=f"HAL device URI to replay on (default {DEFAULT_DEVICE})")
    replay.add_argument("--file-remap", action="append", default=[], metavar="FROM=TO",
                        help="remap a captured external file path prefix (repeatable)")
    replay.add_argument("--executable-substitution", action="append", default=[],
                        metavar="ID=PATH",
                        help="replace executable ID (or ID@FORMAT, all) by PATH (repeatable)")
    replay.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"time limit in seconds (default {DEFAULT_TIMEOUT_S:g})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        return _fail(args, f"no such file: {args.file}", EXIT_USAGE)
    filtering = args.records or args.kind or args.operation or args.scope
    if args.replay and filtering:
        return _fail(args, "--replay does not combine with --records/--kind/--operation/"
                           "--scope", EXIT_USAGE)
    try:
        if args.replay:
            return _replay(args)
        dump = read_replay(args.file)
    except ToolMissing as error:
        return _fail(args, str(error), EXIT_NO_TOOLS)
    except ReadError as error:
        return _fail(args, str(error), EXIT_FAILED)
    if filtering:
        return _records(args, dump)
    if args.json:
        print_json(iree_summary_json(dump))
    else:
        _print_summary(dump)
    return 0


def _print_summary(dump: ReplayDump) -> None:
    s = dump.summary
    yes_no = {True: "yes", False: "no"}
    print(f"{dump.file}: IREE HAL replay v{s.version}, {s.file_length} bytes")
    print(f"  hermetic: {yes_no[s.hermetic]}   strict replay supported: "
          f"{yes_no[s.strict_replay_supported]}   environment referenced: "
          f"{yes_no[s.environment_referenced]}")
    print(f"  records: {s.record_count} ({s.object_count} objects, {s.operation_count} "
          f"operations, {s.unsupported_count} unsupported)")
    print(f"  scopes: {s.scope_begin_count} ({', '.join(s.scopes) or 'none'})")
    files = s.files
    print(f"  files: {files.get('file_object_count', 0)} (external "
          f"{files.get('external_file_count', 0)}, inline {files.get('inline_file_count', 0)}, "
          f"captured ranges {files.get('range_file_count', 0)})")
    print(f"  executables: {len(dump.executables)}")
    for e in dump.executables:
        functions = "?" if e.function_count is None else e.function_count
        size = "?" if e.data_length is None else e.data_length
        print(f"    id {e.id}: {e.format or 'format unknown'}, {functions} functions, "
              f"{size} bytes (substitute with --executable-substitution {e.id}=PATH)")


def _records(args: argparse.Namespace, dump: ReplayDump) -> int:
    selected = dump.select(args.kind, args.operation, args.scope)
    if args.json:
        print_json(iree_records_json(dump.file, args.kind, args.operation, args.scope, selected))
        return 0
    for record in selected:
        print(_record_line(record))
    if not selected:
        kinds = sorted({r.kind for r in dump.records})
        print(f"no records match; kinds: {', '.join(kinds)}; scopes: "
              f"{', '.join(dict.fromkeys(dump.summary.scopes)) or 'none'}", file=sys.stderr)
    return 0


def _record_line(record: ReplayRecord) -> str:
    scope = "/".join(record.scopes) or "-"
    obj = f"{record.object_type}:{record.object_id}" if record.object_id else "-"
    operation = record.operation if record.operation != "none" else "-"
    return (f"{record.ordinal:>6} {record.kind:<10} {scope:<10} {obj:<20} {operation:<38} "
            f"{record.status:<4} {record.details()}").rstrip()


def _replay(args: argparse.Namespace) -> int:
    try:
        remaps = tuple(split_assignment(t, "--file-remap", "FROM=TO") for t in args.file_remap)
        substitutions = tuple(split_assignment(t, "--executable-substitution", "ID=PATH")
                              for t in args.executable_substitution)
    except ValueError as error:
        return _fail(args, str(error), EXIT_USAGE)
    if substitutions:
        ids = [executable.id for executable in read_replay(args.file).executables]
        problems = check_substitutions(substitutions, ids)
        if problems:
            return _fail(args, "; ".join(problems), EXIT_USAGE)
    options = ReplayOptions(args.device, remaps, substitutions, args.timeout)
    process = start_replay(args.file, options)
    output = []
    try:
        for line in process.lines():
            if line.stream == "stdout":
                output.append(line.text)
                if not args.json:
                    print(line.text, flush=True)
    except KeyboardInterrupt:
        process.cancel()
        process.wait()
        raise
    result = process.wait()
    if args.json:
        print_json(iree_replay_json(str(args.file), result, output))
    elif result.ok:
        print(f"replay of {args.file} on {args.device} {result.describe()}")
        if result.message:
            print(result.message, file=sys.stderr)
    else:
        print(f"workbench iree: replay of {args.file} on {args.device} {result.describe()}",
              file=sys.stderr)
    return 0 if result.ok else EXIT_FAILED


def _fail(args: argparse.Namespace, message: str, status: int) -> int:
    if args.json:
        print_json(iree_error_json(str(args.file), message))
    else:
        print(f"workbench iree: {message}", file=sys.stderr)
    return status

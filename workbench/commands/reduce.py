"""`workbench reduce DIR MODULE`: a minimal reproducer of the culprit pass's departure.

Bisects the module to its culprit pass, localizes the culprit instruction, and writes a dump
folder with the instruction alone before and after the pass (its operands as parameters; for
MLIR steps the op in an mlir-trace, its operands as function arguments) and an HloSnapshot of
those operands and the expected value; then bisects that folder to check it shows the same
departure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.commands.replay import (
    NOT_JUDGED_HELP,
    NOT_JUDGED_STATUS,
    UsageError,
    add_module_arguments,
    open_replay,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reduce", help="write a minimal reproducer of the culprit pass's departure",
        description="Find the culprit pass and instruction, then write a dump folder with the "
        "instruction alone before and after the pass (HLO text, or an mlir-trace for MLIR "
        "steps) and a snapshot of its inputs; the folder is checked by bisecting it. Exit "
        "status 1 when the reduction does not reproduce." + NOT_JUDGED_HELP)
    add_module_arguments(parser)
    parser.add_argument("--out", type=Path, metavar="OUT",
                        help="the folder to write (default: ./<module>.reduced); never inside "
                        "DIR")
    parser.add_argument("--force", action="store_true",
                        help="write into OUT even when it exists and is not empty")
    parser.add_argument("--archive", action="store_true",
                        help="also pack OUT/bug-report/ (the HLO files, inputs and commands "
                        "for XLA's tools) into OUT/bug-report.tar.gz")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.destinations import check_folder
    from workbench.replay.bisect import bisect_replay
    from workbench.replay.judge.outcome import Kind
    from workbench.replay.localize.culprit import localize_verdict
    from workbench.replay.localize.result import LocalizeError, NotJudged
    from workbench.replay.localize.text import localization_lines
    from workbench.replay.processes.workers import Cancelled
    from workbench.replay.reduce.hlo import reduce_to_folder

    try:
        selection = open_replay(args)
        out = args.out or Path(f"{selection.module.key}.reduced")
        check_folder(out, "--out", dumps=[args.dir], force=args.force)
    except (UsageError, ValueError) as error:
        print(f"workbench reduce: {error}", file=sys.stderr)
        return 2
    replay, module = selection.replay, selection.module
    verdict = None
    try:
        with replay:
            verdict = bisect_replay(replay)
        localization = localize_verdict(replay, verdict)
        reduction = reduce_to_folder(selection.dump.root, localization, module.name, out,
                                     args.force)
        bundle = None
        if reduction.ir == "hlo":
            from workbench.replay.reduce.bundle import write_bundle

            bundle = write_bundle(selection.dump.root, module, localization, reduction,
                                  archive=args.archive)
    except Cancelled:
        return 130
    except (LocalizeError, ValueError) as error:
        print(f"workbench reduce: {error}", file=sys.stderr)
        # Nothing to reduce because the bisection or localization could not judge the steps
        # (an unsupported op, an error) is no verdict on them.
        unjudged = isinstance(error, NotJudged) or (
            verdict is not None and verdict.status in (Kind.UNSUPPORTED, Kind.ERROR))
        return NOT_JUDGED_STATUS if unjudged else 2
    if args.json:
        from workbench.output.json_shapes import localization_json, reduction_json

        payload = {"module": module.key, "name": module.name,
                   "localization": localization_json(localization),
                   **reduction_json(reduction),
                   "bug_report": None if bundle is None else str(bundle.folder),
                   "archive": None if bundle is None or bundle.archive is None
                   else str(bundle.archive)}
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0 if reduction.reproduces else 1
    print("\n".join(localization_lines(localization)))
    print(f"\nwrote {out}: {', '.join(reduction.files)}")
    print(f"reduced modules: {reduction.instructions[0]} {reduction.unit} before the pass, "
          f"{reduction.instructions[1]} after")
    print(f"reduced before vs the original reference's value: "
          f"{reduction.reference_check.summary}")
    print(f"bisecting the folder: {reduction.verdict_status}"
          + (f", culprit pass {reduction.culprit_pass}" if reduction.culprit_pass else "")
          + f": {reduction.detail}")
    if bundle is not None:
        packed = f" and {bundle.archive}" if bundle.archive is not None else ""
        print(f"bug report for XLA's tools: {bundle.folder}{packed} (README.md says how to "
              f"run it)")
    else:
        print("no bug report for XLA's tools: the reduced modules are MLIR, not HLO")
    if not reduction.reproduces:
        print("the reduction does NOT reproduce the departure")
    return 0 if reduction.reproduces else 1

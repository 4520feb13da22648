"""`workbench triage DIR`: bisect every module x execution of a dump in parallel and list the
failing ones, each with the command that digs into it. Exit status 1 if any mismatch."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from workbench.commands.replay import add_input_arguments
from workbench.replay.outcome import KIND_ORDER, Kind
from workbench.replay.triage import TriageResult


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triage", help="bisect every module x execution of a dump",
        description="Replay every execution of every module against the IR after each pass, "
        "in parallel worker processes, and name the culprit pass of each failing one. "
        "Exit status 1 if any mismatch.")
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("--jobs", "-j", type=int, metavar="N",
                        help="worker processes (default: one per core; 0: in this process, "
                        "without time limits)")
    parser.add_argument("--time-limit", type=float, default=600.0, metavar="SECONDS",
                        help="stop a job (one execution's bisection) after this long "
                        "(default 600; 0: no limit)")
    parser.add_argument("--linear", action="store_true",
                        help="evaluate every step instead of bisecting")
    parser.add_argument("--backend", metavar="NAME",
                        help="replay backend (hlo, mlir); default: the first that fits")
    parser.add_argument("--localize", action="store_true",
                        help="name the culprit instruction of each culprit pass (its op_name "
                        "and source line)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_input_arguments(parser, one_module=False)
    parser.set_defaults(func=run)


def dig_command(root: Path, result: TriageResult) -> str:
    """The exact command that shows this execution step by step."""
    words = ["workbench", "replay", str(root), result.module]
    if result.execution is not None:
        words += ["--execution", result.execution]
    else:
        words.append("--fake-data")
    if result.status == Kind.MISMATCH:
        words.append("--print-changes-only")
    return shlex.join(words)


def describe(result: TriageResult) -> str:
    head = f"{result.status:<11} {result.module} ({result.name}) {result.execution or 'fake data'}"
    culprit = result.culprit
    if culprit is not None:
        xla = f", XLA step {culprit['xla_step']:04d}" if culprit["xla_step"] is not None else ""
        head += f": culprit step {culprit['index']}, pass {culprit['pass']}{xla}"
    return head


def instruction_text(instruction: dict) -> str:
    """`rsqrt.2 (sqrt, jit(ln)/rsqrt) in fused_computation.1 at program.py:4`."""
    op_name = f", {instruction['op_name']}" if instruction["op_name"] else ""
    source = f" at {instruction['source']}" if instruction["source"] else ""
    return (f"{instruction['name']} ({instruction['opcode']}{op_name}) in "
            f"{instruction['computation']}{source}")


def run(args: argparse.Namespace) -> int:
    from workbench.index import scan
    from workbench.replay.inputs import InputSpec
    from workbench.replay.triage import TriageOptions, triage, triage_jobs
    from workbench.replay.workers import default_jobs

    if not args.dir.exists():
        print(f"workbench triage: {args.dir}: no such file or folder", file=sys.stderr)
        return 2
    dump = scan(args.dir)
    options = TriageOptions(linear=args.linear, atol=args.atol, rtol=args.rtol,
                            inputs=InputSpec(fake_data=args.fake_data, seed=args.seed),
                            backend=args.backend, localize=args.localize)
    jobs = default_jobs() if args.jobs is None else max(0, args.jobs)
    time_limit = args.time_limit or None
    count = len(triage_jobs(dump, options.inputs))
    if not args.json:
        workers = "in this process" if jobs == 0 else f"{min(jobs, count) or 1} worker(s)"
        print(f"Triaging {count} execution(s) of {len(dump.modules)} module(s) in {dump.root} "
              f"({workers}).", flush=True)

    def show(result: TriageResult) -> None:
        if not args.json and result.status != Kind.OK:
            print(describe(result), flush=True)

    results = triage(dump, options, jobs=jobs, time_limit=time_limit, on_result=show)
    exit_status = 1 if any(r.status == Kind.MISMATCH for r in results) else 0
    counts = {str(kind): sum(1 for r in results if r.status == kind) for kind in KIND_ORDER}
    if args.json:
        from workbench.output.json_shapes import triage_json

        json.dump(triage_json(results, counts), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return exit_status
    print(f"\n{len(results)} execution(s): " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    failing = sorted((r for r in results if r.status != Kind.OK),
                     key=lambda r: (KIND_ORDER[r.status], r.module, r.execution or ""))
    for result in failing:
        print()
        print(describe(result))
        if result.culprit is not None and result.culprit["file"]:
            print(f"    file: {result.culprit['file']}")
        if result.culprit is not None and "instruction_note" in result.culprit:
            print(f"    no culprit instruction: {result.culprit['instruction_note']}")
        elif result.culprit is not None and result.culprit.get("instruction"):
            print(f"    instruction: {instruction_text(result.culprit['instruction'])}")
        print(f"    {result.detail}")
        print(f"    dig in: {dig_command(args.dir, result)}")
    return exit_status

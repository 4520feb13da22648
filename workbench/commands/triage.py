"""`workbench triage DIR`: bisect every module x execution of a dump in parallel and list the
failing ones, each with the command that digs into it. Exit status 1 if any mismatch, else 5
when an execution could not be judged or there was none."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.commands.limits import time_limit_seconds
from workbench.commands.replay import (
    NOT_JUDGED_HELP,
    UsageError,
    add_input_arguments,
    attach_recorded_executions,
    judged_counts,
    judged_status,
)
from workbench.commands.shared_reports import (
    add_report_arguments,
    check_report_arguments,
    write_reports,
)
from workbench.replay.judge.outcome import KIND_ORDER, Kind
from workbench.replay.triage.run import TriageResult

if TYPE_CHECKING:
    from workbench.model import Dump
    from workbench.replay.judge.culprit import CulpritInstruction
    from workbench.replay.triage.dask_engine import DaskSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "triage", help="bisect every module x execution of a dump",
        description="Replay every execution of every module against the IR after each pass, "
        "in parallel worker processes, and name the culprit pass of each failing one. "
        "Exit status 1 if any mismatch." + NOT_JUDGED_HELP)
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("--jobs", "-j", type=int, metavar="N",
                        help="worker processes (default: one per core; 0: in this process, "
                        "without time limits)")
    parser.add_argument("--time-limit", type=time_limit_seconds, default=600.0, metavar="SECONDS",
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
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="run each job as a task on this Dask cluster "
                         "(e.g. tcp://10.0.0.5:8786); needs the dask extra")
    cluster.add_argument("--dask-workers", type=int, metavar="N",
                         help="run the jobs on a local Dask cluster of N worker processes")
    parser.add_argument("--connect-timeout", type=connect_timeout_seconds, metavar="SECONDS",
                        default=10.0, help="with --scheduler: give up when no scheduler "
                        "answers within this long (default 10)")
    parser.add_argument("--ship-files", action="store_true",
                        help="with Dask: send each job's files with its task, so workers need "
                        "no shared filesystem")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="results cache folder (default: $XDG_CACHE_HOME/workbench or "
                        "~/.cache/workbench)")
    parser.add_argument("--no-cache", action="store_true",
                        help="evaluate every job, and keep no results")
    add_input_arguments(parser, one_module=False)
    add_report_arguments(parser)
    parser.set_defaults(func=run)


def connect_timeout_seconds(text: str) -> float:
    seconds = time_limit_seconds(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds, more than 0")
    return seconds


def dig_command(root: Path, result: TriageResult) -> str:
    """The exact command that shows this execution step by step."""
    from workbench.output.triage_report import dig_command as command

    return command(root, result.module, result.execution, result.status)


def describe(result: TriageResult) -> str:
    head = f"{result.status:<11} {result.module} ({result.name}) {result.execution or 'fake data'}"
    culprit = result.culprit
    if culprit is not None:
        xla = f", XLA step {culprit.xla_step:04d}" if culprit.xla_step is not None else ""
        head += f": culprit step {culprit.index}, pass {culprit.pass_name}{xla}"
    return head


def instruction_text(instruction: CulpritInstruction) -> str:
    """`rsqrt.2 (sqrt, jit(ln)/rsqrt) in fused_computation.1 at program.py:4`, with where
    inside its called computations it changed when it did, and `on partition(s) 2, 3` when a
    per-device step departs only on some."""
    op_name = f", {instruction.op_name}" if instruction.op_name else ""
    source = f" at {instruction.source}" if instruction.source else ""
    partitions = (f" on partition(s) {', '.join(map(str, instruction.partitions))}"
                  if instruction.partitions else "")
    inside = f" (changed inside: {instruction.inside})" if instruction.inside else ""
    return (f"{instruction.name} ({instruction.opcode}{op_name}) in "
            f"{instruction.computation}{source}{inside}{partitions}")


def dask_settings(args: argparse.Namespace) -> DaskSettings | None:
    """What `--scheduler`, `--dask-workers` and `--ship-files` ask for (None: no Dask);
    raises DaskUnavailable when Dask is asked for but not installed."""
    if args.scheduler is None and args.dask_workers is None:
        return None
    from workbench.replay.triage.dask_engine import DaskSettings, require_dask

    require_dask()
    return DaskSettings(scheduler=args.scheduler, local_workers=max(1, args.dask_workers or 1),
                        ship_files=args.ship_files, connect_timeout=args.connect_timeout)


def run(args: argparse.Namespace) -> int:
    from workbench.index import scan
    from workbench.output.progress import Progress, wanted
    from workbench.replay.inputs import InputSpec
    from workbench.replay.processes.workers import default_jobs
    from workbench.replay.triage.dask_engine import SchedulerUnreachable
    from workbench.replay.triage.results_cache import ResultsCache, UnsafeCache, default_cache_dir
    from workbench.replay.triage.run import TriageOptions, triage, triage_jobs

    if not args.dir.exists():
        print(f"workbench triage: {args.dir}: no such file or folder", file=sys.stderr)
        return 2
    if args.jobs is not None and (args.scheduler is not None or args.dask_workers is not None):
        print("workbench triage: --jobs is for this machine's worker processes; with Dask the "
              "cluster's workers run the jobs", file=sys.stderr)
        return 2
    if args.ship_files and args.scheduler is None and args.dask_workers is None:
        print("workbench triage: --ship-files needs --scheduler or --dask-workers",
              file=sys.stderr)
        return 2
    refused = check_report_arguments(args, args.dir)
    if refused is not None:
        print(f"workbench triage: {refused}", file=sys.stderr)
        return 2
    try:
        dask = dask_settings(args)
    except Exception as error:  # DaskUnavailable: Dask itself is not imported here
        print(f"workbench triage: {error}", file=sys.stderr)
        return 2
    if dask is not None and dask.scheduler is not None:
        from workbench.replay.triage.dask_engine import is_local_address

        if not is_local_address(dask.scheduler):
            print(f"workbench triage: warning: {dask.scheduler} is not on this machine; a Dask "
                  "cluster exchanges pickles with its clients, so whoever runs its scheduler or "
                  "workers can run code here: use only a cluster you trust", file=sys.stderr)
    try:
        cache = None if args.no_cache else ResultsCache(args.cache or default_cache_dir())
    except UnsafeCache as error:
        print(f"workbench triage: {error}", file=sys.stderr)
        return 2
    dump = scan(args.dir)
    try:
        attach_recorded_executions(dump, args)
    except UsageError as error:
        print(f"workbench triage: {error}", file=sys.stderr)
        return 2
    if args.recorded is not None or _has_recordings(dump):
        if args.ship_files:
            print("workbench triage: --ship-files sends the dump's files; a recording's folder "
                  "(--recorded's, or one found in the dump) must be on a filesystem the "
                  "workers share", file=sys.stderr)
            return 2
        cache = None  # the cache keys executions by their snapshot file
    options = TriageOptions(linear=args.linear, atol=args.atol, rtol=args.rtol,
                            inputs=InputSpec(fake_data=args.fake_data, seed=args.seed),
                            backend=args.backend, localize=args.localize)
    jobs = default_jobs() if args.jobs is None else max(0, args.jobs)
    time_limit = args.time_limit
    count = len(triage_jobs(dump, options.inputs))
    if not args.json:
        if dask is not None:
            workers = (f"Dask scheduler {dask.scheduler}" if dask.scheduler else
                       f"a local Dask cluster of {dask.local_workers} worker(s)")
        else:
            workers = "in this process" if jobs == 0 else f"{min(jobs, count) or 1} worker(s)"
        print(f"Triaging {count} execution(s) of {len(dump.modules)} module(s) in {dump.root} "
              f"({workers}).", flush=True)
        if not args.fake_data:
            _say_why_not_triaged(dump)

    with Progress("triage", count, wanted(args.json)) as progress:

        def show(result: TriageResult) -> None:
            progress.advance(failed=result.status != Kind.OK)
            if not args.json and result.status != Kind.OK:
                print(describe(result), flush=True)

        # SIGTERM ends the command as SystemExit (workbench.termination): the local pool and
        # the Dask run stop what runs on their way out, as for Ctrl-C.
        try:
            results = triage(dump, options, jobs=jobs, time_limit=time_limit, on_result=show,
                             cache=cache, dask=dask)
        except SchedulerUnreachable as error:
            print(f"workbench triage: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("workbench triage: interrupted; no job is left running", file=sys.stderr)
            return 130
    exit_status = judged_status([r.status for r in results])
    judged, unjudged = judged_counts([r.status for r in results])
    if args.html is not None or args.junit_xml is not None:
        _write_reports(args, dump, results)
    counts = {str(kind): sum(1 for r in results if r.status == kind) for kind in KIND_ORDER}
    if args.json:
        from workbench.output.json_shapes import triage_json

        payload = triage_json(results, counts)
        payload.update(judged=judged, unjudged=unjudged,
                       not_triaged=[] if args.fake_data else not_triaged(dump))
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return exit_status
    cached = sum(1 for r in results if r.cached)
    reused = f" ({cached} from the results cache)" if cached else ""
    print(f"\n{len(results)} execution(s){reused}: "
          + ", ".join(f"{n} {s}" for s, n in counts.items())
          + f"; {judged} judged, {unjudged} not judged")
    failing = sorted((r for r in results if r.status != Kind.OK),
                     key=lambda r: (KIND_ORDER[r.status], r.module, r.execution or ""))
    for result in failing:
        print()
        print(describe(result))
        culprit = result.culprit
        if culprit is not None and culprit.file:
            print(f"    file: {culprit.file}")
        if culprit is not None and culprit.instruction is not None:
            print(f"    instruction: {instruction_text(culprit.instruction)}")
        elif culprit is not None and culprit.localized:
            print(f"    no culprit instruction: {culprit.instruction_note}")
        print(f"    {result.detail}")
        print(f"    dig in: {dig_command(args.dir, result)}")
    return exit_status


def _has_recordings(dump: Dump) -> bool:
    from workbench.formats.recording import KIND

    return any(e.kind == KIND for module in dump.modules for e in module.executions)


def _write_reports(args: argparse.Namespace, dump: Dump, results: list[TriageResult]) -> None:
    from workbench.output.triage_report import entry_of_triage

    modules = {module.key: module for module in dump.modules}
    entries = [entry_of_triage(dump.root, args.dir, modules.get(r.module), r) for r in results]
    write_reports(args, f"workbench triage {dump.root.name}", dump.root,
                  shlex.join(["workbench", "triage", str(args.dir)]), entries)


def not_triaged(dump: Dump) -> list[dict[str, str]]:
    """The modules left out for want of an execution, each with why and what to do."""
    from workbench.formats.recording import no_execution_note
    from workbench.formats.xla_devices import no_snapshot_note

    return [{"module": module.key, "name": module.name,
             "note": no_snapshot_note(dump.root, module, "--recorded")
             or no_execution_note(module)}
            for module in dump.modules if not module.executions]


def _say_why_not_triaged(dump: Dump) -> None:
    """A line for each module left out for want of an execution."""
    for entry in not_triaged(dump):
        print(f"{entry['module']} ({entry['name']}): {entry['note']}", flush=True)

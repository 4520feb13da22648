"""`workbench bisect DIR MODULE`: name the first step whose result differs from the
reference, in at most ceil(log2 N) + 2 evaluations (`--linear`: every step)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING

from workbench.commands.replay import (
    NOT_JUDGED_HELP,
    UsageError,
    add_module_arguments,
    judged_counts,
    judged_status,
    open_replay,
    status_line,
    step_heading,
)
from workbench.commands.shared_reports import (
    add_report_arguments,
    check_report_arguments,
    write_reports,
)
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import StepResult

if TYPE_CHECKING:
    from workbench.commands.replay import Selection
    from workbench.replay.bisect import Verdict
    from workbench.replay.localize.result import Localization
    from workbench.replay.parallel_verdict import ParallelVerdict


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bisect", help="find the pass that changed a module's result",
        description="Bisect a module's steps: the culprit is the first step whose result "
        "differs from the reference (the first step) while its predecessor's does not. "
        "Exit status 1 when something differs." + NOT_JUDGED_HELP)
    add_module_arguments(parser)
    parser.add_argument("--linear", action="store_true",
                        help="evaluate every step instead of bisecting (shows non-monotone "
                        "results)")
    parser.add_argument("--localize", action="store_true",
                        help="then name the culprit instruction: the first value the culprit "
                        "pass got wrong, its op_name and source line")
    add_parallel_arguments(parser)
    add_report_arguments(parser)
    parser.set_defaults(func=run)


def add_parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the verdict's independent evaluations run: local workers or a Dask cluster."""
    parser.add_argument("--jobs", "-j", type=int, metavar="N", default=1,
                        help="run the verdict's independent evaluations (the f64 truth and "
                        "its perturbed twin, the random-rounding samples) on N worker "
                        "processes side by side (default 1: one after the other)")
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="run them on this Dask cluster (e.g. tcp://10.0.0.5:8786), whose "
                         "workers read the dump at this path; needs the dask extra")
    cluster.add_argument("--dask-workers", type=int, metavar="N",
                         help="run them on a local Dask cluster of N worker processes")


def parallel_evaluations(args: argparse.Namespace) -> ParallelVerdict | None:
    """What `--jobs`, `--scheduler` and `--dask-workers` ask for (None: one at a time);
    raises `UsageError` for what cannot be."""
    from workbench.replay.parallel_verdict import LocalWorkers, ParallelVerdict

    dask = args.scheduler is not None or args.dask_workers is not None
    if dask and args.jobs != 1:
        raise UsageError("--jobs is for this machine's worker processes; with Dask the "
                         "cluster's workers run the evaluations")
    if not dask:
        return ParallelVerdict(LocalWorkers(args.jobs)) if args.jobs > 1 else None
    from workbench.replay.triage.dask_engine import (
        DaskSettings,
        DaskUnavailable,
        SchedulerUnreachable,
        require_dask,
    )

    try:
        require_dask()
        from workbench.replay.triage.dask_verdict import DaskWorkers

        settings = DaskSettings(scheduler=args.scheduler,
                                local_workers=max(1, args.dask_workers or 1))
        return ParallelVerdict(DaskWorkers(settings))
    except (DaskUnavailable, SchedulerUnreachable) as error:
        raise UsageError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    from workbench.output.progress import Progress, wanted
    from workbench.replay.bisect import bisect_replay, evaluation_bound
    from workbench.replay.processes.workers import Cancelled

    refused = check_report_arguments(args, args.dir)
    if refused is not None:
        print(f"workbench bisect: {refused}", file=sys.stderr)
        return 2
    try:
        selection = open_replay(args)
        selection.replay.parallel = parallel_evaluations(args)
    except UsageError as error:
        print(f"workbench bisect: {error}", file=sys.stderr)
        return 2
    replay, module = selection.replay, selection.module
    count = len(replay.steps)

    if not args.json:
        how = "every step" if args.linear else f"at most {evaluation_bound(count)} evaluations"
        print(f"Bisecting {module.key} ({module.name}) on {replay.inputs.origin}: {count} "
              f"{replay.backend.name} steps, {how}.", flush=True)
    problem = replay.noise_stage_problem()
    if problem is not None:
        print(f"workbench bisect: note: a step that only the random-rounding stage could "
              f"judge will not be judged: it {problem}", file=sys.stderr, flush=True)
    total = count if args.linear else evaluation_bound(count)
    try:
        progress = Progress("bisect", total, wanted(args.json), unit="steps", phases=True)
        replay.on_phase, replay.planned_steps = progress.phase, total
        with progress:

            def show(result: StepResult) -> None:
                progress.advance(failed=result.kind != Kind.OK)
                if not args.json:
                    print(f"{step_heading(result)} {status_line(result)}", flush=True)

            with replay:
                verdict = bisect_replay(replay, linear=args.linear, on_result=show)
    except Cancelled:
        return 130
    # The verdict's status decides (a culprit found past skipped steps is a mismatch); the
    # counts say how many of the steps it evaluated were judged.
    exit_status = judged_status([verdict.status])
    judged, unjudged = judged_counts([r.kind for r in verdict.results])
    # The culprit's instruction, or why it could not be found.
    localization: Localization | str | None = None
    if args.localize and verdict.culprit is not None:
        from workbench.replay.localize.culprit import localize_verdict
        from workbench.replay.localize.result import LocalizeError

        try:
            localization = localize_verdict(replay, verdict)
        except LocalizeError as error:
            localization = str(error)
    if args.html is not None or args.junit_xml is not None:
        _write_reports(args, selection, verdict, localization)
    if args.json:
        from workbench.output.json_shapes import bisect_json, culprit_json

        payload = bisect_json(module.key, module.name,
                              selection.execution.id if selection.execution else None,
                              replay.inputs.origin, verdict)
        payload.update(judged=judged, unjudged=unjudged)
        if localization is not None and verdict.culprit is not None:
            from workbench.replay.judge.culprit import Culprit
            from workbench.replay.localize.culprit import with_instruction

            payload["culprit"] = culprit_json(
                with_instruction(Culprit.of_step(verdict.culprit.step, selection.dump.root),
                                 localization))
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return exit_status
    print()
    if verdict.culprit is not None:
        step = verdict.culprit.step
        print(f"culprit: step {step.index} ({step.label}), pass {step.pass_name}: {step.file}")
    elif verdict.candidates:
        names = ", ".join(f"{s.index} ({s.label})" for s in verdict.candidates)
        print(f"culprit: one of steps {names}")
    print(f"{verdict.status}: {verdict.detail}")
    bound = "" if args.linear else f" (bound {evaluation_bound(count)})"
    shadow = (f"; {verdict.shadow_evaluations} higher-precision evaluations of the reference "
              "for the rounding error bound" if verdict.shadow_evaluations else "")
    if verdict.noise_evaluations:
        from workbench.replay.judge.noise.model import SAMPLES

        shadow += (f", and {verdict.noise_evaluations} with random rounding "
                   f"({SAMPLES} samples) for the noise inside the program")
    print(f"{verdict.evaluations} evaluations of {count} steps{bound}{shadow}; {judged} steps "
          f"judged, {unjudged} not judged.")
    if isinstance(localization, str):
        print(f"\nno culprit instruction: {localization}")
    elif localization is not None:
        from workbench.replay.localize.text import localization_lines

        print()
        print("\n".join(localization_lines(localization)))
    return exit_status


def _write_reports(args: argparse.Namespace, selection: Selection, verdict: Verdict,
                   localization: Localization | str | None) -> None:
    from workbench.output.triage_report import entry_of_verdict
    from workbench.replay.judge.culprit import Culprit
    from workbench.replay.localize.culprit import with_instruction

    culprit = None
    if verdict.culprit is not None:
        culprit = Culprit.of_step(verdict.culprit.step, selection.dump.root)
        if localization is not None:
            culprit = with_instruction(culprit, localization)
    module = selection.module
    execution = selection.execution.id if selection.execution else None
    entry = entry_of_verdict(selection.dump.root, args.dir, module, execution, verdict, culprit)
    command = ["workbench", "bisect", str(args.dir), module.key]
    if execution is not None:
        command += ["--execution", execution]
    write_reports(args, f"workbench bisect {module.key} ({module.name})", selection.dump.root,
                  shlex.join(command), [entry])

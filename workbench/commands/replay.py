"""`workbench replay DIR MODULE`: evaluate every step of a module on an execution's inputs.

The output follows XLA's `mlir_replay`: `Running IR after <pass>.`, then the results (only
when they changed, with `--print-changes-only`), then how the step compares with the
reference (the first step) within tolerance. The argument helpers here are shared with
`workbench bisect`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.commands.limits import add_memory_limit_argument, time_limit_seconds
from workbench.destinations import OutputFolder, RefusedDestination, check_folder
from workbench.hlo_ir import LiteralValue
from workbench.model import Dump, Execution, Module
from workbench.replay.judge.outcome import Kind
from workbench.replay.steps import Replay, StepResult


class UsageError(Exception):
    """Bad arguments or unreadable inputs: printed as `workbench CMD: message`, exit 2."""


# The exit status of a run that found no difference but could not judge everything (an
# unsupported op, an evaluation error, nothing to judge): never 0, so a CI gate on the exit
# status cannot pass with nothing checked.
NOT_JUDGED_STATUS = 5
NOT_JUDGED_HELP = (" Exit status 5 when nothing differs but something could not be judged "
                   "(an unsupported op, an error, nothing to judge).")


def judged_counts(kinds: list[Kind]) -> tuple[int, int]:
    """How many of these outcomes were judged (ok, mismatch) and how many were not."""
    judged = sum(1 for kind in kinds if kind in (Kind.OK, Kind.MISMATCH))
    return judged, len(kinds) - judged


def judged_status(kinds: list[Kind]) -> int:
    """1 when any outcome is a mismatch; else `NOT_JUDGED_STATUS` when any was not judged, or
    there is none; else 0."""
    if Kind.MISMATCH in kinds:
        return 1
    return NOT_JUDGED_STATUS if not kinds or judged_counts(kinds)[1] else 0


def add_module_arguments(parser: argparse.ArgumentParser) -> None:
    """DIR MODULE and how to pick the inputs, tolerances and evaluator."""
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("module", help="module id (module_0010), key, or name (jit_ln)")
    parser.add_argument("--execution", metavar="ID",
                        help="which execution (an id such as snapshot.-17687811, or its file); "
                        "default: the module's first")
    add_input_arguments(parser)
    parser.add_argument("--time-limit", type=time_limit_seconds, metavar="SECONDS",
                        help="stop any one step's evaluation after this long (it then runs in "
                        "a worker process; 0: no limit)")
    parser.add_argument("--backend", metavar="NAME",
                        help="replay backend (hlo, mlir); default: the first that fits")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_input_arguments(parser: argparse.ArgumentParser, one_module: bool = True) -> None:
    """Inputs and tolerances; `.npy` inputs only where one module is replayed."""
    if one_module:
        parser.add_argument("--inputs", nargs="+", type=Path, metavar="FILE.npy",
                            help="evaluate on these arrays (one .npy file per entry parameter)")
        fake_help = "evaluate on seeded random inputs shaped like the entry parameters"
    else:
        fake_help = "replay modules without an execution on seeded random inputs too"
    parser.add_argument("--fake-data", action="store_true", help=fake_help)
    parser.add_argument("--recorded", type=Path, metavar="DIR",
                        help="executions from DIR/inputs/NAME.argK.npy (and the recorded "
                        "result from DIR/outputs/NAME.outK.npy) for module jit_NAME")
    parser.add_argument("--seed", type=int, default=0, help="seed for --fake-data (default 0)")
    parser.add_argument("--atol", type=float, metavar="X",
                        help="absolute tolerance for every dtype (default: per dtype, see README)")
    parser.add_argument("--rtol", type=float, metavar="Y",
                        help="relative tolerance for every dtype (default: per dtype)")
    add_memory_limit_argument(parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay", help="evaluate every step of a module on recorded inputs",
        description="Evaluate the IR after each pass on an execution's inputs and compare each "
        "result with the reference (the first step) and the reference with the recorded "
        "result. Exit status 1 when a step or the recorded result differs." + NOT_JUDGED_HELP)
    add_module_arguments(parser)
    parser.add_argument("--print-changes-only", action="store_true",
                        help="print a step's results only when they differ from the last printed")
    parser.add_argument("--stop-after-first-failure", action="store_true",
                        help="stop after the first step that is not ok")
    parser.add_argument("--dump-literals", type=Path, metavar="OUT",
                        help="write the inputs, the expected (reference) and actual results as "
                        ".npy files under OUT (never inside DIR; a folder with files in it "
                        "only with --force)")
    parser.add_argument("--force", action="store_true",
                        help="let --dump-literals write into a folder that has files")
    parser.set_defaults(func=run)


@dataclass
class Selection:
    dump: Dump
    module: Module
    execution: Execution | None
    replay: Replay


def _text_stand_ins(root: Path, results: list[StepResult]) -> list[str]:
    """A line for each HLO step judged from its text because its proto cannot be read: the
    app and `diff` show the text, a replay judges the proto where it can."""
    from workbench.loader import judged_file

    lines = []
    for result in results:
        if result.step.ir != "hlo":
            continue
        file, error = judged_file(root, result.step)
        if error is not None:
            lines.append(f"step {result.step.index} ({result.step.label}) judged from its text "
                         f"{file}: {error}")
    return lines


def pick_execution(module: Module, query: str | None) -> Execution | None:
    if query is None:
        return module.executions[0] if module.executions else None
    for execution in module.executions:
        if query in (execution.id, execution.file, Path(execution.file).name):
            return execution
    known = ", ".join(e.id for e in module.executions) or "none"
    raise UsageError(f"no execution {query!r} of {module.key}; executions: {known}")


def attach_recorded_executions(dump: Dump, args: argparse.Namespace) -> None:
    """`--recorded DIR`: its functions become executions of their modules; raises `UsageError`."""
    from workbench.replay.inputs import InputError
    from workbench.replay.recorded_io import attach_recorded

    if getattr(args, "recorded", None) is None:
        return
    if not args.recorded.is_dir():
        raise UsageError(f"--recorded {args.recorded}: no such folder")
    try:
        attach_recorded(dump, args.recorded)
    except InputError as error:
        raise UsageError(f"--recorded: {error}") from None


def open_replay(args: argparse.Namespace, keep_values: bool = False) -> Selection:
    """Scan DIR, find the module, its backend and inputs; raises `UsageError`."""
    from workbench.index import scan
    from workbench.loader import ReadError
    from workbench.replay.backends import NoBackend
    from workbench.replay.inputs import InputError, InputSpec
    from workbench.replay.steps import make_runner
    from workbench.replay.steps import open_replay as open_module_replay

    if not args.dir.exists():
        raise UsageError(f"{args.dir}: no such file or folder")
    dump = scan(args.dir)
    attach_recorded_executions(dump, args)
    try:
        module = dump.find_module(args.module)
    except KeyError as error:
        raise UsageError(error.args[0]) from None
    execution = pick_execution(module, args.execution)
    spec = InputSpec(tuple(args.inputs or ()), args.fake_data, args.seed)
    try:
        replay = open_module_replay(dump.root, module, execution, spec, backend=args.backend,
                                    atol=args.atol, rtol=args.rtol,
                                    runner=make_runner(args.time_limit),
                                    keep_values=keep_values)
    except NoBackend as error:
        raise UsageError(str(error)) from None
    except (InputError, ReadError) as error:
        from workbench.formats.xla_devices import no_snapshot_note

        note = None if execution is not None else \
            no_snapshot_note(dump.root, module, "--inputs/--recorded")
        raise UsageError(f"cannot get the inputs: {note or error}") from None
    if not replay.steps:
        raise UsageError(f"{module.key} has no steps the {replay.backend.name} backend can "
                         "replay")
    return Selection(dump, module, execution if not (spec.npy or spec.fake_data) else None,
                     replay)


def step_heading(result: StepResult) -> str:
    """mlir_replay's line, with where the step sits in the timeline."""
    step = result.step
    where = [f"step {step.index}"]
    if step.xla_step is not None:
        where.append(f"XLA step {step.xla_step:04d}")
    if step.pipeline:
        where.append(f"pipeline {step.pipeline}")
    return f"Running IR after {step.pass_name} ({', '.join(where)})."


def status_line(result: StepResult) -> str:
    if result.position == 0:
        return f"reference ({result.seconds:.3g} s)"
    return f"{result.outcome.text} ({result.seconds:.3g} s)"


def format_literal(value: LiteralValue, path: str = "") -> list[str]:
    """One line per array: its type, then numpy's summarised print of it."""
    from workbench.replay.judge.compare import describe_array

    if isinstance(value, tuple):
        lines: list[str] = []
        for index, element in enumerate(value):
            lines.extend(format_literal(element, f"{path}{{{index}}} "))
        return lines
    array = np.asarray(value)
    try:
        text = np.array2string(array, threshold=24, edgeitems=3, max_line_width=100,
                               separator=", ")
    except (TypeError, ValueError):  # a dtype numpy cannot print: show it as float32
        text = np.array2string(array.astype(np.float32), threshold=24, edgeitems=3,
                               max_line_width=100, separator=", ")
    return [f"{path}{describe_array(array)} {text}"]


def _save(out: OutputFolder, stem: str, value: LiteralValue, manifest: list[dict],
          **about: Any) -> None:
    from workbench.replay.judge.compare import describe_array

    if isinstance(value, tuple):
        for index, element in enumerate(value):
            _save(out, f"{stem}.{index}", element, manifest, **about)
        return
    array = np.asarray(value)
    name = f"{stem}.npy"
    out.write(name, lambda stream: np.save(stream, array, allow_pickle=False))
    # ml_dtypes types (bf16, f8) are saved as raw void bytes: the manifest says what they are.
    manifest.append({"file": name, "type": describe_array(array), "dtype": array.dtype.name,
                     **about})


def dump_literals(out: Path, selection: Selection, results: list[StepResult]) -> int:
    """Write inputs, reference (expected), recorded and every differing step's result (actual)."""
    replay = selection.replay
    manifest: list[dict] = []
    with OutputFolder(out) as folder:
        for number, argument in enumerate(replay.inputs.arguments):
            _save(folder, f"input.{number}", argument, manifest, role="input")
        if replay.reference_value is not None:
            _save(folder, "expected", replay.reference_value, manifest, role="expected",
                  step=replay.steps[0].index, **{"pass": replay.steps[0].pass_name})
        if replay.inputs.recorded is not None:
            _save(folder, "recorded", replay.inputs.recorded, manifest, role="recorded")
        for result in results:
            if result.kind == Kind.MISMATCH and result.value is not None:
                stem = f"actual.step{result.step.index:03d}.{result.step.pass_name}"
                _save(folder, stem, result.value, manifest, role="actual",
                      step=result.step.index, **{"pass": result.step.pass_name})
        folder.write("literals.json", json.dumps({"files": manifest}, indent=1) + "\n")
    return len(manifest)


def run(args: argparse.Namespace) -> int:
    from workbench.loader import judged_file
    from workbench.replay.judge.compare import results_equal
    from workbench.replay.processes.workers import Cancelled

    try:
        if args.dump_literals is not None:
            check_folder(args.dump_literals, "--dump-literals", dumps=[args.dir],
                         inputs=args.inputs or (), force=args.force)
        selection = open_replay(args, keep_values=not args.json or args.dump_literals is not None)
    except (UsageError, RefusedDestination) as error:
        print(f"workbench replay: {error}", file=sys.stderr)
        return 2
    replay = selection.replay
    module = selection.module
    printed: list[LiteralValue] = []

    def show(result: StepResult) -> None:
        if args.json:
            return
        print(step_heading(result))
        value = result.value if result.position else replay.reference_value
        if value is not None and (not args.print_changes_only or not printed
                                  or not results_equal(printed[-1], value)):
            print("Results:")
            for line in format_literal(value):
                print(line)
            printed[:] = [value]
        print(status_line(result))
        if result.position == 0 and replay.recorded_not_judged is not None:
            print(f"recorded result vs reference: {replay.recorded_not_judged}")
        elif result.position == 0 and replay.recorded_comparison is not None:
            print(f"recorded result vs reference: {replay.recorded_comparison.summary}")
            if replay.recorded_environment is not None:
                print(f"  decided by the platform's floating-point environment: "
                      f"{replay.recorded_environment}")
        print(flush=True)
        if result.position and not args.dump_literals:
            result.value = None  # printed: no need to hold every step's result

    if not args.json:
        print(f"Replaying {module.key} ({module.name}) on {replay.inputs.origin}: "
              f"{len(replay.steps)} {replay.backend.name} steps; the reference is "
              f"{replay.steps[0].pass_name} (step {replay.steps[0].index}).\n", flush=True)
    try:
        with replay:
            results = replay.run(on_result=show,
                                 stop_after_first_failure=args.stop_after_first_failure)
    except Cancelled:
        return 130
    written = dump_literals(args.dump_literals, selection, results) if args.dump_literals else 0
    failing = [r for r in results if r.kind == Kind.MISMATCH]
    recorded = replay.recorded_comparison
    mismatch = bool(failing) or (recorded is not None and not recorded.ok
                                 and replay.recorded_not_judged is None)
    kinds = [r.kind for r in results]
    judged, unjudged = judged_counts(kinds)
    # A recording only the refused noise stage could judge leaves the run not judged.
    exit_status = 1 if mismatch else judged_status(
        kinds + ([Kind.ERROR] if replay.recorded_not_judged is not None else []))
    if args.json:
        from workbench.loader import judged_file
        from workbench.output.json_shapes import replay_json

        payload = replay_json(module.key, module.name,
                              selection.execution.id if selection.execution else None,
                              replay.inputs.origin, len(replay.steps), recorded, results,
                              replay.shadow_evaluations)
        payload.update(judged=judged, unjudged=unjudged)
        for result, entry in zip(results, payload["results"], strict=True):
            # `file` is the step's text, as `ls --json` names it; this is what was judged.
            entry["judged_file"] = judged_file(selection.dump.root, result.step)[0] \
                if result.step.ir == "hlo" else result.step.file
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return exit_status
    counts = {kind: sum(1 for r in results if r.kind == kind) for kind in Kind}
    print(f"{len(results)} of {len(replay.steps)} steps replayed: "
          + ", ".join(f"{n} {kind}" for kind, n in counts.items())
          + f"; {judged} judged, {unjudged} not judged")
    for line in _text_stand_ins(selection.dump.root, results):
        print(line)
    if failing:
        first = failing[0].step
        file = judged_file(selection.dump.root, first)[0] if first.ir == "hlo" else first.file
        print(f"first mismatch: step {first.index} ({first.label}): {file}")
    if written:
        print(f"wrote {written} .npy files and literals.json to {args.dump_literals}")
    return exit_status

"""After a bisection: `L` localizes the culprit instruction, `W` writes a reduced reproducer
(an object the app owns and hands these keys and the `Localized` message to).

`L` evaluates the step before the culprit and the culprit step keeping every value (a job in
the replay's worker process, so escape and the status line work as for a replay and keys stay
answered), writes the culprit instruction, its source
line, both versions of its text and the first differing elements to the replay log, and turns
the diff pane to the raw diff with both versions of the instruction marked and in view. `W`
asks for the reducer's folder (`./workbench-repro-<module>-<step>` at first, then beside the
last one written; never in the dump, never one with files in it), writes it (its README.txt
says what it holds and the commands to run on it) and says where; `O` opens it in the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType
from textual.message import Message

from workbench.tui.jobs import Job

if TYPE_CHECKING:
    from workbench.model import Module, Step
    from workbench.replay.localize.result import Localization
    from workbench.replay.steps import Replay
    from workbench.tui.context import ControlContext

LOCALIZE_TIME_LIMIT = 600.0  # seconds a localization may take in the worker process

LOCALIZE_BINDINGS: list[BindingType] = [
    Binding("L", "localize", "Localize",
            tooltip="After a bisection: name the culprit instruction, its source line and "
            "values; the diff shows both versions"),
    Binding("W", "write_reduced", "Write",
            tooltip="After L: write a minimal reproducer (a dump folder) to a folder you "
            "choose"),
    Binding("O", "open_written", "Open repro", show=False,
            tooltip="After W: open the reproducer's folder in the app (a second workbench in "
            "this terminal; q there comes back here)"),
]


def default_folder(module: Module, step: Step, last: Path | None) -> Path:
    """Where `W` proposes to write: `workbench-repro-<module>-<step>-<pass>` in the current
    folder, or beside the last reproducer written; `-2`, `-3`... when that one has files."""
    from workbench.tui.outside import safe_file_name

    number = f"{step.xla_step:04d}" if step.xla_step is not None else f"{step.index:02d}"
    name = safe_file_name(f"workbench-repro-{module.name or module.key}-{number}-"
                          f"{step.pass_name}")
    base = last.parent if last is not None else Path.cwd()
    folder, count = base / name, 1
    while folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        count += 1
        folder = base / f"{name}-{count}"
    return folder


def folder_refusal(folder: Path, dump: Path) -> str | None:
    """Why `W` may not write to `folder` (inside the dump, a file, not empty); None: it may."""
    from workbench.destinations import RefusedDestination, check_folder

    try:
        check_folder(folder, "the folder", dumps=[dump], force=True)
    except RefusedDestination as refusal:
        return str(refusal)
    if folder.is_dir() and any(folder.iterdir()):
        return (f"the folder {folder} is not empty: choose a new or empty folder (nothing "
                "is written over)")
    return None


class Localized(Message):
    """A localization finished (`result`), or could not be done (`problem`)."""

    def __init__(self, module_key: str, result: Localization | None, problem: str = "") -> None:
        super().__init__()
        self.module_key = module_key
        self.result = result
        self.problem = problem


class LocalizeControl:
    """Localization and reduction for the app, which hands it the actions of
    `LOCALIZE_BINDINGS` and `Localized`; it starts from the app's `verdicts` (the last bisection
    of each module, set by the replay control) and keeps the last localization of each module
    in `localizations`."""

    def __init__(self, app: ControlContext) -> None:
        self.app = app
        self.localizations: dict[str, Localization] = {}  # module key -> last localization
        self.written: Path | None = None  # the last reproducer folder `W` wrote

    def action_localize(self) -> None:
        app, module = self.app, self.app.selection.module
        if module is None or module.key not in app.verdicts:
            app.notify("bisect (b) or triage (T) first: localization starts from the culprit pass",
                       timeout=4)
            return
        execution, verdict = app.verdicts[module.key]
        if verdict.culprit is None:
            app.notify("the last bisection found no culprit step to localize", timeout=4)
            return

        def work(job: Job, replay: Replay) -> None:
            from workbench.replay.localize.culprit import localize_or_say_why
            from workbench.replay.steps import ProcessRunner

            position = verdict.culprit.position if verdict.culprit is not None else 0
            call = (localize_or_say_why, replay.backend, replay.steps[position - 1],
                    replay.steps[position], list(replay.inputs.arguments))
            runner = replay.runner
            if isinstance(runner, ProcessRunner):  # the evaluation holds the GIL: not here
                outcome = runner.pool.call(*call, time_limit=LOCALIZE_TIME_LIMIT,
                                           cancel=job.cancel)
                if outcome.cancelled:
                    return
                result = outcome.value if outcome.error is None and not outcome.timed_out \
                    else (f"time limit of {LOCALIZE_TIME_LIMIT:g} s exceeded"
                          if outcome.timed_out else str(outcome.error).strip().splitlines()[-1])
            else:
                result = call[0](*call[1:])
            if isinstance(result, str):
                app.post_message(Localized(module.key, None, result))
            else:
                app.post_message(Localized(module.key, result))

        app.jobs.run_in_background(f"localize {module.name or module.key}", module, execution,
                                   work, kind="localize")

    def on_localized(self, event: Localized) -> None:
        from workbench.replay.localize.text import finding_lines, localization_lines
        from workbench.tui.panes.diff import DiffPane

        app, result = self.app, event.result
        if result is None:
            app.log_line(f"localize: {event.problem}")
            app.notify(event.problem, severity="warning", timeout=5)
            return
        self.localizations[event.module_key] = result
        lines = localization_lines(result)
        for line in lines:
            app.log_line(line)
        if result.instruction is None or result.counterpart is None:
            app.notify("no single instruction explains the departure (see the log)", timeout=5)
            app.pane(DiffPane).show_finding(finding_lines(result), result.after)
            return
        ref = result.instruction
        app.offer_copy("\n".join(line.strip() for line in lines[1:4]))  # instruction, op, source
        where = f" at {ref.source}" if ref.source else ""
        app.notify(f"{ref.name} ({ref.opcode}{', ' + ref.op_name if ref.op_name else ''})"
                   f"{where}", timeout=6)
        app.go_to_step(event.module_key, result.after, open_diff=False)
        # On screen too, the differing values first: the box above the diff has a few lines.
        app.pane(DiffPane).show_finding(finding_lines(result), result.after)
        app.pane(DiffPane).show_instruction(result.counterpart.name, ref.name)
        app.action_focus_pane("DiffPane")

    def action_write_reduced(self) -> None:
        """Ask for the folder (pre-filled), then write the reproducer there."""
        from workbench.tui.folder_prompt import FolderPrompt

        app, module = self.app, self.app.selection.module
        result = self.localizations.get(module.key) if module is not None else None
        if module is None or result is None or result.instruction is None:
            app.notify("localize a culprit instruction first (L)", timeout=4)
            return
        root = app.dump.root
        chosen = module

        def write(folder: Path | None) -> None:
            if folder is not None:
                self.write_reduced(chosen, result, folder)

        app.push_screen(FolderPrompt(f"write a reproducer of {module.name or module.key}'s "
                                     f"culprit to:", default_folder(module, result.after,
                                                                    self.written),
                                     lambda folder: folder_refusal(folder, root)), write)

    def write_reduced(self, module: Module, result: Localization, out: Path) -> None:
        """Write the reducer's folder `out` (checked by the prompt) as a background job."""
        app = self.app
        execution, _ = app.verdicts[module.key]
        root = app.dump.root

        def work(job: Job, replay: Replay) -> None:
            from workbench.destinations import OutputError
            from workbench.replay.localize.result import LocalizeError
            from workbench.replay.reduce.hlo import reduce_to_folder

            try:
                reduction = reduce_to_folder(root, result, module.name, out)
                bundle = None
                if reduction.ir == "hlo":
                    from workbench.replay.reduce.bundle import write_bundle

                    bundle = write_bundle(root, module, result, reduction)
            except (LocalizeError, ValueError, OutputError) as error:
                app.call_from_thread(app.log_line, f"reduce: {error}")
                app.call_from_thread(app.notify, f"reduce: {error}", severity="warning",
                                     timeout=8)
                return
            verdict = "reproduces" if reduction.reproduces else "does NOT reproduce"
            message = (f"wrote {out} ({reduction.instructions[0]} and "
                       f"{reduction.instructions[1]} {reduction.unit}; {verdict}: "
                       f"{reduction.verdict_status}, pass {reduction.culprit_pass or '-'})")
            self.written = out
            app.call_from_thread(app.log_line, message)
            if bundle is not None:
                app.call_from_thread(app.log_line, f"bug report for XLA's tools: "
                                     f"{bundle.folder} (its README.md says how to run it)")
            app.call_from_thread(app.notify, f"{message}; O opens it in the app", timeout=8)
            app.call_from_thread(app.offer_copy, str(out))

        app.jobs.run_in_background(f"reduce {module.name or module.key}", module, execution,
                                   work, kind="reduce")

"""`workbench show DIR MODULE`: one module's pass timeline, executions and artifacts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.index import scan
from workbench.output.json_shapes import print_json, show_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("show", help="show one module's pass timeline")
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("module", help="module id (module_0010), key, or name (jit_ln)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--changed", action="store_true",
                        help="compare each step with the previous one (normalized) and fill "
                        "the changed column")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    dump = scan(args.dir)
    try:
        module = dump.find_module(args.module)
    except KeyError as error:
        print(f"workbench show: {error.args[0]}", file=sys.stderr)
        return 2
    if args.changed:
        from workbench.diff.steps import mark_changed

        mark_changed(dump.root, module)
    if args.json:
        print_json(show_json(module, dump.problems))
        return 0
    from rich.table import Table

    from workbench.formats.xla_devices import no_snapshot_note
    from workbench.output.safe_text import plain, terminal_console
    from workbench.output.short_names import with_short_name

    console = terminal_console()
    table = Table(title=plain(f"{module.key} {module.name} ({module.format})"),
                  title_justify="left")
    mlir = any(step.scope for step in module.steps)
    columns = (("#", "kind", "pass", "scope", "time s", "changed", "file") if mlir
               else ("#", "step", "pipeline", "pass", "next", "changed", "file"))
    for column in columns:
        table.add_column(column, overflow="fold")
    def short(file: str | None) -> str:
        return with_short_name(file or "", module.name)

    for step in module.steps:
        changed = {True: "yes", False: "no", None: ""}[step.changed]
        if mlir:  # MLIR steps: what the dump shows and the pass's time say more than XLA's
            timing = "" if step.timing_s is None else f"{step.timing_s:.4f}"
            table.add_row(str(step.index), step.kind, plain(step.pass_name),
                          plain(step.scope or ""), timing, changed, plain(short(step.file)))
            continue
        table.add_row(str(step.index), "" if step.xla_step is None else f"{step.xla_step:04d}",
                      plain(step.pipeline or ""), plain(step.pass_name),
                      plain(step.next_pass or ""), changed, plain(short(step.file)))
    console.print(table)
    for execution in module.executions:
        console.print(plain(f"execution {execution.id}: {short(execution.file)}"))
    note = no_snapshot_note(dump.root, module, "--inputs/--recorded")
    if note is not None:
        console.print(plain(f"executions: none, {note}"))
    for artifact in module.artifacts:
        label = f" ({artifact.label})" if artifact.label else ""
        console.print(plain(f"artifact {artifact.kind}{label}: {short(artifact.file)}"))
    return 0

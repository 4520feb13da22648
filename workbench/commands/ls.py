"""`workbench ls DIR`: the modules, steps, executions and problems of a dump folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.gc_pause import gc_paused
from workbench.index import scan
from workbench.model import Dump
from workbench.output.json_shapes import module_json, problems_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ls", help="list the modules of a dump folder or file")
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true",
                        help="also read every step and execution, listing those that cannot "
                             "be read as problems (slower: opens every file)")
    parser.set_defaults(func=run)


def dump_json(dump: Dump) -> dict:
    return {
        "root": str(dump.root),
        "modules": [module_json(module) for module in dump.modules],
        "problems": problems_json(dump.problems),
        "others": dump.others,
    }


def run(args: argparse.Namespace) -> int:
    dump = scan(args.dir)
    if args.check:
        from workbench.check import check_dump

        dump.problems.extend(check_dump(dump, _progress if sys.stderr.isatty() else None))
    if args.json:
        # Compact: json's C encoder does not indent, and a large dump's listing is megabytes.
        # One dict per step, none in a cycle: collecting while they are built only costs.
        with gc_paused():
            text = json.dumps(dump_json(dump))
        sys.stdout.write(text)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{dump.root}", title_justify="left")
    table.add_column("module")
    table.add_column("name")
    table.add_column("format")
    table.add_column("steps", justify="right")
    table.add_column("per-pass", justify="right")
    table.add_column("executions", justify="right")
    table.add_column("artifacts", justify="right")
    for module in dump.modules:
        per_pass = sum(1 for s in module.steps if s.kind == "pass")
        table.add_row(module.key, module.name, module.format, str(len(module.steps)),
                      str(per_pass), str(len(module.executions)), str(len(module.artifacts)))
    console.print(table)
    console.print(f"{len(dump.modules)} modules, {len(dump.others)} other files, "
                  f"{len(dump.problems)} problems")
    for problem in dump.problems:
        console.print(f"[red]problem[/]: {problem.file}: {problem.reason}", markup=True,
                      highlight=False)
    return 0


def _progress(done: int, total: int) -> None:
    """`checking 120/2591` on the terminal, overwritten in place, cleared at the end."""
    sys.stderr.write(f"\rchecking {done}/{total}" if done < total else "\r\033[K")
    sys.stderr.flush()

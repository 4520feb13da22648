"""`workbench actions FILE`: an MLIR action log as a tree, filtered, or as a Chrome trace."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.destinations import RefusedDestination, check_file, write_file_atomically
from workbench.formats.action_log import (
    Action,
    ActionLog,
    chrome_trace,
    filter_actions,
    parse_location,
    read_action_log,
)
from workbench.model import Source
from workbench.output.json_shapes import actions_json, print_json
from workbench.sources import ReadError, read_bytes

# Problems printed (a damaged log can have one per line: 100,000 lines of them would bury the
# summary); `--json` has them all.
PROBLEMS_SHOWN = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "actions", help="show an MLIR action log (--log-actions-to): tree, filters, trace")
    parser.add_argument("file", type=Path, help="the action log")
    parser.add_argument("--tag", help="only actions of this tag (shell pattern: 'apply-*')")
    parser.add_argument("--pass", dest="pass_name", metavar="PASS",
                        help="only actions run by this pass (shell pattern: '*Canonicalizer*')")
    parser.add_argument("--loc", metavar="FILE[:LINE[:COL]]",
                        help="only actions whose IR carries this source location")
    parser.add_argument("--chrome-trace", type=Path, metavar="OUT",
                        help="write the (filtered) actions as a Chrome/Perfetto trace to OUT "
                        "(outside the log's folder; an existing OUT only with --force)")
    parser.add_argument("--force", action="store_true",
                        help="let --chrome-trace replace an existing file")
    parser.add_argument("--limit", type=int, default=200,
                        help="most actions to print (default 200; --json prints all)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.loc:
        try:
            parse_location(args.loc)
        except ValueError as error:
            print(f"workbench actions: {error}", file=sys.stderr)
            return 2
    path: Path = args.file
    if args.chrome_trace is not None:
        try:
            check_file(args.chrome_trace, "--chrome-trace", dumps=[path], inputs=[path],
                       force=args.force)
        except RefusedDestination as error:
            print(f"workbench actions: {error}", file=sys.stderr)
            return 2
    try:
        log = read_action_log(read_bytes(path.parent, Source(path.name)), str(path))
    except ReadError as error:
        print(f"workbench actions: {error}", file=sys.stderr)
        return 2
    filtered = any(v is not None for v in (args.tag, args.pass_name, args.loc))
    chosen = filter_actions(log.actions, tag=args.tag, pass_name=args.pass_name,
                            location=args.loc) if filtered else log.actions
    if args.chrome_trace is not None:
        # A write that fails raises OutputError: the command ends with its status (cli.py).
        write_file_atomically(args.chrome_trace, json.dumps(chrome_trace(log, chosen)))
    if args.json:
        print_json(actions_json(str(path), log, chosen))
        return 0
    _print(log, chosen, filtered, args)
    return 0


def _print(log: ActionLog, chosen: list[Action], filtered: bool,
           args: argparse.Namespace) -> None:
    from workbench.output.safe_text import markup, terminal_console

    console = terminal_console(highlight=False, soft_wrap=True)
    tags = ", ".join(f"{markup(tag)} {count}" for tag, count in sorted(log.tags().items()))
    console.print(f"[bold]{markup(str(args.file))}[/]: {len(log.actions)} actions ({tags}), "
                  f"{len(log.open_actions)} never completed")
    shown = chosen if filtered else [a for a in log.actions if a.tag == "pass-execution"]
    if not filtered:
        console.print("pass executions (filter with --tag, --pass, --loc to see the rest):")
    for action in shown[: args.limit]:
        mark = " " if action.completed else "…"
        if action.skipped:
            mark = "⤼"
        what = action.pass_name or action.pattern or action.printed
        run = action.pass_run()
        context = f"  [dim]in {markup(run.pass_name or '')}[/]" if (
            run is not None and run is not action) else ""
        target = f" on {markup(action.operation)}" if action.operation else ""
        console.print(f"{action.line:>7} {mark} {'  ' * action.depth}[cyan]{markup(action.tag)}"
                      f"[/] {markup(what)}{target}{context}")
    if len(shown) > args.limit:
        console.print(f"… {len(shown) - args.limit} more (--limit, or --json for all)")
    if filtered:
        console.print(f"{len(chosen)} of {len(log.actions)} actions match")
    if args.chrome_trace is not None:
        console.print(f"wrote {markup(str(args.chrome_trace))} (open it in Perfetto or "
                      "chrome://tracing)")
    for problem in log.problems[:PROBLEMS_SHOWN]:
        console.print(f"[red]problem[/]: {markup(problem.reason)}")
    if len(log.problems) > PROBLEMS_SHOWN:
        console.print(f"[red]problem[/]: … {len(log.problems) - PROBLEMS_SHOWN} more "
                      f"({len(log.problems)} in all; --json lists them)")

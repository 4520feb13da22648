"""`workbench completion bash|zsh`: a shell completion script generated from the parsers.

shtab writes the script from the argparse parsers themselves, so a command or flag added to a
parser completes without a hand-written script to keep up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

SHELLS = ("bash", "zsh")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "completion", help="print a bash or zsh completion script",
        description="Print a completion script for SHELL, generated from the commands' "
        "parsers. Subcommands, flags and their choices complete; files and folders complete "
        "as paths.")
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    # Set by `workbench.cli.build_parser`: running this command builds only its own parser,
    # the script needs every command's.
    build_parser: Callable[[], argparse.ArgumentParser] = args.full_parser
    parser = build_parser()
    _complete_paths_as_files(parser, shtab.FILE)
    sys.stdout.write(shtab.complete(parser, shell=args.shell))
    return 0


def _complete_paths_as_files(parser: argparse.ArgumentParser, file: object) -> None:
    """Arguments of type Path complete as file names (shtab's marker on the action)."""
    for action in parser._actions:
        if action.type is Path:
            action.complete = file  # type: ignore[attr-defined]  # shtab's own attribute
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _complete_paths_as_files(sub, file)

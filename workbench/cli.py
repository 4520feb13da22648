"""The `workbench` command: headless subcommands, or the TUI when none is given.

Each subcommand lives in `workbench/commands/<name>.py` with `register(subparsers)` that adds its
parser and sets `func(args) -> int` (the exit status). A dash in a command's name is an
underscore in its module's (`mlir-replay` lives in `commands/mlir_replay.py`).
`workbench [DIR]` with no subcommand opens the TUI on DIR.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import os
import sys
from contextlib import nullcontext

from workbench.blas_threads import one_blas_thread_unless_set
from workbench.commands.help_examples import add_examples
from workbench.commands.limits import add_read_arguments, apply_limits
from workbench.destinations import OUTPUT_ERROR_STATUS, OutputError
from workbench.open_files import allow_open_files
from workbench.output.safe_text import visible_standard_streams
from workbench.termination import exit_on_termination_signals

# Commands (modules under workbench.commands), in the order `--help` lists them.
COMMAND_MODULES = [
    "ls", "show", "diff", "iree", "replay", "bisect", "localize", "reduce", "triage", "mlir-replay",
    "actions", "report", "completion",
]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser for every command, or for `only` one of them.

    Running one command builds just its parser: importing every command module would import
    what all of them need (numpy, xDSL, ...), a cost `workbench ls` should not pay.
    """
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Find the compiler pass that broke your numbers. "
        "Run `workbench DIR` for the terminal app, or a subcommand for headless use.",
    )
    parser.add_argument("--version", action=_PrintVersion, help="print the version and exit")
    add_examples(parser, "")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else [only]:
        module = importlib.import_module(f"workbench.commands.{name.replace('-', '_')}")
        module.register(subparsers)
    for name, command in subparsers.choices.items():
        add_read_arguments(command)
        add_examples(command, name)
    if "completion" in subparsers.choices:  # its script needs every command's parser
        subparsers.choices["completion"].set_defaults(full_parser=build_parser)
    return parser


def version() -> str:
    """The installed package's version (its metadata), as `workbench --version` prints it."""
    import importlib.metadata  # only when asked: it imports email, zipfile, csv, ...

    try:
        return importlib.metadata.version("dump-triage-workbench")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: run from a source tree)"


class _PrintVersion(argparse.Action):
    """`--version`: reads the version only when given (argparse's own action wants the text
    when the parser is built, which every command would pay for)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                         nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    one_blas_thread_unless_set()
    allow_open_files()
    if not argv or (argv[0] not in COMMAND_MODULES and argv[0] not in _TOP_LEVEL_FLAGS):
        from workbench.commands import tui

        return tui.main(argv)
    parser = build_parser(argv[0] if argv[0] in COMMAND_MODULES else None)
    args = parser.parse_args(argv)
    _print_names_as_they_are(sys.stdout)
    exit_on_termination_signals()
    apply_limits(args)
    # JSON escapes control characters itself; everything else a command prints may quote a
    # name from the dump, so it is shown with its control characters visible.
    streams = nullcontext() if getattr(args, "json", False) else visible_standard_streams()
    try:
        with streams:
            status = args.func(args)
            sys.stdout.flush()  # a full disk shows here, not at exit
            return status
    except BrokenPipeError:  # `workbench ls DIR | head`
        sys.stderr.close()
        return 0
    except OutputError as error:  # disk full, no permission: the writer cleaned up
        print(f"workbench {args.command}: {error}", file=sys.stderr)
        return OUTPUT_ERROR_STATUS
    except OSError as error:
        if error.errno not in _OUTPUT_FULL:
            raise
        # `workbench ls DIR > /dev/full`: what is still buffered can never be written either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"workbench {args.command}: cannot write the output: {error.strerror}",
              file=sys.stderr)
        return OUTPUT_ERROR_STATUS
    except KeyboardInterrupt:
        return 130


# Flags of `workbench` itself; anything else that is not a command opens the app.
_TOP_LEVEL_FLAGS = ("-h", "--help", "--version")

# Errors of a full or failing output device (a command's own output files are written by
# `workbench.destinations`, which reports them as `OutputError`).
_OUTPUT_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _print_names_as_they_are(stream: object) -> None:
    """File names that are not UTF-8 (any bytes are allowed on Linux) reach Python as lone
    surrogates; print them back as the bytes they are, as `ls` does, instead of stopping at
    the first one with UnicodeEncodeError (the default for a UTF-8 locale's stdout)."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="surrogateescape")

"""`workbench [DIR]`: the terminal app."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.commands.limits import add_read_arguments, apply_limits


def build_parser() -> argparse.ArgumentParser:
    """`workbench [DIR]`'s parser (the CLI reference page is generated from it too)."""
    parser = argparse.ArgumentParser(prog="workbench", description="Open the terminal app.")
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."),
                        help="dump folder (or one dump file)")
    parser.add_argument("--theme", help="theme name (dark, light, mono, or one of your own in "
                        "~/.config/workbench/themes) or a theme file")
    parser.add_argument("--no-watch", action="store_true",
                        help="scan once; do not follow changes to the folder")
    parser.add_argument("--recorded", type=Path, metavar="DIR",
                        help="executions from DIR/inputs/NAME.argK.npy (and the recorded "
                        "result from DIR/outputs/NAME.outK.npy) for module jit_NAME")
    add_read_arguments(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    apply_limits(args)
    from workbench.tui.app import run_app

    if args.recorded is not None:
        import sys

        from workbench.replay.inputs import InputError
        from workbench.replay.recorded_io import recorded_names

        try:
            recorded_names(args.recorded)
        except (InputError, OSError) as error:
            print(f"workbench: --recorded: {error}", file=sys.stderr)
            return 2
    return run_app(args.dir, theme=args.theme, watch=not args.no_watch, recorded=args.recorded)

"""`workbench [DIR]`: the terminal app."""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="workbench", description="Open the terminal app.")
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), help="dump folder")
    parser.add_argument("--theme", help="theme name or a theme file from themes/")
    args = parser.parse_args(argv)
    from workbench.tui.app import run_app

    return run_app(args.dir, theme=args.theme)

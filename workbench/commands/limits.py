"""The limits a command runs under: `--max-read` and `--follow-links` (every command that
reads a dump) and `--memory-limit` (the commands that evaluate). They are set in the
environment, so worker processes run under them too (see `workbench.sources` and
`workbench.replay.processes.memory`)."""

from __future__ import annotations

import argparse
import math

from workbench.sizes import parse_size
from workbench.sources import set_follow_links, set_read_limit


def add_read_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-read", type=parse_size, metavar="SIZE",
                        help="most bytes to read from one file, after decompression "
                        "(default 512M, or $WORKBENCH_READ_LIMIT)")
    parser.add_argument("--follow-links", action="store_true",
                        help="read files that links in the dump point to outside it (by "
                        "default they are listed as problems and not read)")


def add_memory_limit_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--memory-limit", type=parse_size, metavar="SIZE",
                        help="most memory one evaluation may use, e.g. 4G; a replay whose "
                        "kept values would pass half of it keeps them on disk (default: a "
                        "quarter of this machine's memory, or $WORKBENCH_MEMORY_LIMIT)")


def time_limit_seconds(text: str) -> float | None:
    """`--time-limit`: seconds, more than 0; 0 means no limit (None). nan, inf and negative
    numbers are refused: none of them is a time."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time limit: give seconds, more than 0 (0: no limit)")
    return seconds or None


def apply_limits(args: argparse.Namespace) -> None:
    """Set the limits the arguments give, before the command reads or evaluates anything."""
    if getattr(args, "max_read", None) is not None:
        set_read_limit(args.max_read)
    if getattr(args, "follow_links", False):
        set_follow_links()
    if getattr(args, "memory_limit", None) is not None:
        from workbench.replay.processes.memory import set_memory_limit

        set_memory_limit(args.memory_limit)

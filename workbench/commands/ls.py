"""`workbench ls DIR`: the modules, steps, executions and problems of a dump folder."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench.gc_pause import gc_paused
from workbench.index import scan
from workbench.model import Dump
from workbench.output.json_shapes import write_dump_json
from workbench.output.safe_text import raw_stream
from workbench.output.short_names import short_name

COLUMNS = ("module", "name", "format", "steps", "per-pass", "executions", "artifacts")
KEY_FOLD = 16  # a longer module key may fold over lines in a framed table


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ls", help="list the modules of a dump folder or file")
    parser.add_argument("dir", type=Path, help="dump folder (or a single dump file)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true",
                        help="also read every step and execution, listing those that cannot "
                             "be read as problems (slower: opens every file)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        from workbench.check import check_dump

        dump = scan(args.dir)
        dump.problems.extend(check_dump(dump, _progress if sys.stderr.isatty() else None))
        return _list(dump, args.json)
    # The index and the listing build objects that live until the command ends and form no
    # cycles: a collection between the two would examine them all for nothing (a tenth of
    # the command's time on a 30,000-file dump).
    with gc_paused():
        return _list(scan(args.dir), args.json)


def _list(dump: Dump, as_json: bool) -> int:
    if as_json:
        # Written a module at a time (a large dump's listing is megabytes); the steps made for
        # it form no cycles either.
        with gc_paused():
            write_dump_json(dump, sys.stdout.write)
        sys.stdout.write("\n")
        return 0
    # The key whole (other commands take it), even where it holds the name (`_make_keys_unique`).
    rows = [(module.key, short_name(module.name),
             module.format, str(module.step_count),
             str(module.pass_step_count), str(len(module.executions)),
             str(len(module.artifacts))) for module in dump.modules]
    # A framed table only when it fits on the terminal: more rows than a screen, or output
    # into a pipe or file, get plain columns (as fast for 10,000 rows as for 10).
    terminal = shutil.get_terminal_size()
    if not sys.stdout.isatty():
        _print_plain(dump, rows, width=None)
        return 0
    fitted = _framed_widths(_widths(rows), terminal.columns)
    if len(rows) + 8 <= terminal.lines and fitted is not None:
        _print_framed(dump, rows, *fitted)
    else:
        _print_plain(dump, rows, width=terminal.columns)
    return 0


def _framed_widths(widths: list[int], columns: int) -> tuple[int, int] | None:
    """The key's and the name's widths in a frame `columns` wide, None when it cannot fit.

    The counts keep their width; on a narrow terminal the name folds down to its heading's
    width and a key longer than KEY_FOLD folds down to KEY_FOLD (never cut: other commands
    take it). A frame takes 3 characters a column and 1 more."""
    room = columns - sum(widths[2:]) - 3 * len(COLUMNS) - 1
    key, name = widths[0], widths[1]
    if key + name <= room:
        return key, name
    key = min(key, max(KEY_FOLD, room - len(COLUMNS[1])))
    return (key, room - key) if room - key >= len(COLUMNS[1]) else None


def _widths(rows: Sequence[tuple[str, ...]]) -> list[int]:
    """Each column's width: its longest cell or heading."""
    return [max([len(column), *(len(row[i]) for row in rows)])
            for i, column in enumerate(COLUMNS)]


def _print_framed(dump: Dump, rows: Sequence[tuple[str, ...]], key_width: int,
                  name_width: int) -> None:
    from rich.table import Table

    from workbench.output.safe_text import markup, plain, terminal_console

    console = terminal_console()
    table = Table(title=plain(str(dump.root)), title_justify="left")
    # Widths of our own: Rich, short of room, would cut any column, the key's too.
    for number, column in enumerate(COLUMNS):
        table.add_column(column, justify="right" if number > 2 else "left",
                         no_wrap=number > 1, overflow="fold",
                         width={0: key_width, 1: name_width}.get(number))
    for row in rows:
        table.add_row(*(plain(cell) for cell in row))
    console.print(table)
    console.print(_summary(dump))
    for problem in dump.problems:
        console.print(f"[red]problem[/]: {markup(problem.file)}: {markup(problem.reason)}",
                      highlight=False)


def _print_plain(dump: Dump, rows: Sequence[tuple[str, ...]], width: int | None) -> None:
    """Columns separated by two spaces, names left-aligned and counts right-aligned.

    On a terminal `width` columns wide the name column is cut in its middle to fit (never the
    module key); into a pipe or file (`width` None) every cell is whole."""
    widths = _widths(rows)
    excess = sum(widths) + 2 * (len(widths) - 1) - (width or 0)
    if width is not None and excess > 0:
        widths[1] = max(len(COLUMNS[1]), widths[1] - excess)
        rows = [(row[0], _cut_middle(row[1], widths[1]), *row[2:]) for row in rows]
    line = "  ".join(f"{{:{'<' if i < 3 else '>'}{w}}}" for i, w in enumerate(widths))
    out = [str(dump.root), line.format(*COLUMNS).rstrip()]
    out += [line.format(*row).rstrip() for row in rows]
    out.append(_summary(dump))
    out += [f"problem: {problem.file}: {problem.reason}" for problem in dump.problems]
    sys.stdout.write("\n".join(out) + "\n")


def _cut_middle(text: str, width: int) -> str:
    """`text`, or its head and tail around `…` in `width` characters."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return f"{text[:width - 1 - tail]}…{text[len(text) - tail:]}"


def _summary(dump: Dump) -> str:
    return (f"{len(dump.modules)} modules, {len(dump.others)} other files, "
            f"{len(dump.problems)} problems")


def _progress(done: int, total: int) -> None:
    """`checking 120/2591` on the terminal, overwritten in place, cleared at the end."""
    terminal = raw_stream(sys.stderr)  # its control codes are the point: not made visible
    terminal.write(f"\rchecking {done}/{total}" if done < total else "\r\033[K")
    terminal.flush()

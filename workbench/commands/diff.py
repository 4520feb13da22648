"""`workbench diff`: the IR of two steps of a module, or of two files, modulo renumbering.

    workbench diff DIR MODULE A B     A/B: timeline index, XLA step (0028) or pass name
    workbench diff DIR MODULE STEP    what STEP did: its IR against the IR before it
    workbench diff FILE_A FILE_B

Exit status as GNU diff: 0 equal, 1 different, 2 trouble.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from workbench.diff.ir_diff import IRDiff, diff_normalized
from workbench.diff.normalize import NormalizeOptions, TextKind, normalize
from workbench.diff.render import side_by_side, summary_lines, unified
from workbench.gc_pause import gc_paused
from workbench.model import Source, Step
from workbench.output.json_shapes import diff_json, print_json
from workbench.sources import ReadError, read_text

TEXT_KINDS: dict[str, TextKind] = {"hlo": "hlo", "mlir": "mlir", "text": "text"}  # --ir


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diff", help="diff the IR of two steps (or two files), ignoring renumbering",
        description="Diff two steps of a module (DIR MODULE A B; A/B: timeline index, XLA "
        "step number like 0028, pass name or MLIR pass argument), what one step did (DIR "
        "MODULE STEP: against its Before dump, or the IR as the steps before it left it), or "
        "two files (FILE_A FILE_B). Names are compared modulo renumbering; metadata, "
        "backend_config, source tables and loc(...) are ignored. An MLIR dump of one function "
        "is compared with that function in a module dump. Exit status: 0 equal, 1 different, "
        "2 trouble.")
    parser.add_argument("operands", nargs="+", metavar="ARG",
                        help="DIR MODULE A B, DIR MODULE STEP, or FILE_A FILE_B")
    parser.add_argument("--raw", action="store_true", help="no normalization at all")
    parser.add_argument("--keep-names", action="store_true",
                        help="compare names as printed (no renumbering tolerance)")
    parser.add_argument("--keep-metadata", action="store_true",
                        help="compare HLO metadata, backend_config and frontend_attributes")
    parser.add_argument("--keep-source-tables", action="store_true",
                        help="compare HLO FileNames/FunctionNames/FileLocations/StackFrames")
    parser.add_argument("--keep-locations", action="store_true",
                        help="compare MLIR loc(...) and #loc aliases")
    parser.add_argument("-y", "--side-by-side", action="store_true", help="two columns")
    parser.add_argument("-W", "--width", type=int, default=0,
                        help="side-by-side width (default: the terminal's, or 160)")
    parser.add_argument("-U", "--context", type=int, default=3, metavar="N",
                        help="unchanged lines around each change (default 3)")
    parser.add_argument("--summary", action="store_true",
                        help="only the per-computation/function summary")
    parser.add_argument("--ir", choices=tuple(TEXT_KINDS),
                        help="kind of text (default: detected)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def options_from(args: argparse.Namespace) -> NormalizeOptions:
    if args.raw:
        return NormalizeOptions.raw()
    parts = []
    if args.keep_names:
        parts.append("names")
    if args.keep_metadata:
        parts += ["metadata", "backend_config", "frontend_attributes"]
    if args.keep_source_tables:
        parts.append("source_tables")
    if args.keep_locations:
        parts.append("locations")
    return NormalizeOptions().without(*parts)


def run(args: argparse.Namespace) -> int:
    # Reading, normalizing, diffing and rendering build objects that live until the command
    # ends and form no cycles: collections between the phases would only examine them.
    with gc_paused():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    options = options_from(args)
    try:
        if len(args.operands) == 2:
            diff, label_a, label_b = _diff_files(args.operands, args.ir, options)
        elif len(args.operands) in (3, 4):
            diff, label_a, label_b = _diff_steps(args.operands, options)
        else:
            _error("give DIR MODULE A B (two steps of a module), DIR MODULE STEP (what one "
                   "step did) or FILE_A FILE_B")
            return 2
    except (KeyError, ReadError) as error:
        _error(error.args[0] if isinstance(error, KeyError) else str(error))
        return 2
    status = 0 if diff.equal else 1
    context = max(0, args.context)
    if args.json:
        print_json(diff_json(diff, label_a, label_b, context))
        return status
    if args.summary:
        _print(summary_lines(diff))
        return status
    if args.side_by_side:
        width = args.width or _terminal_width()
        _print(side_by_side(diff, label_a, label_b, context, width))
    else:
        _print(unified(diff, label_a, label_b, context))
    return status


def _diff_files(paths: list[str], ir: str | None, options: NormalizeOptions
                ) -> tuple[IRDiff, str, str]:
    texts = []
    sources = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            raise ReadError(name, "is a folder; give DIR MODULE A B to diff two steps")
        sources.append(_text_source(path.name))
        texts.append(read_text(path.parent, sources[-1]))
    printed = [source.entry is not None for source in sources]
    if printed[0] != printed[1]:  # a text dump against a proto: what the proto cannot hold
        texts = [text if was_printed else _without_config_flags(text)
                 for text, was_printed in zip(texts, printed, strict=True)]
    kind = TEXT_KINDS[ir] if ir is not None else None
    a = normalize(texts[0], kind, options)
    b = normalize(texts[1], kind or a.kind, options)
    return diff_normalized(a, b), paths[0], paths[1]


def _text_source(name: str) -> Source:
    """A file's text: an HLO proto (`.hlo.pb`) printed as HLO text, so a step's text dump
    and its proto dump, the same program, diff as such; any other file as it is."""
    from workbench.formats.hlo_print import PRINTED_FROM_PROTO, PROTO_SUFFIXES

    if name.endswith(PROTO_SUFFIXES):
        return Source(name, entry=PRINTED_FROM_PROTO)
    return Source(name)


# Flags XLA prints on the `HloModule` line from the module's config, which a `.hlo.pb` dump
# (an HloProto) does not hold; the titles of the source tables that may follow that line.
_SOURCE_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_CONFIG_FLAGS = re.compile(
    r", allow_spmd_sharding_propagation_to_(?:parameters|output)=\{[a-z,]*\}")


def _without_config_flags(text: str) -> str:
    """`text` as a printed proto reads: its `HloModule` line without the config-only flags,
    and no source tables (`FileNames` ... `StackFrames`, which the printer leaves out) before
    the first computation, nor the blank lines they leave."""
    header, _, rest = text.partition("\n")
    if not header.startswith("HloModule "):
        return text
    header = _CONFIG_FLAGS.sub("", header)
    first = re.search(r"^(?:ENTRY )?%", rest, re.MULTILINE)
    if first is None or not rest[: first.start()].strip("\n").startswith(_SOURCE_TABLES):
        return header + "\n" + rest
    return header + "\n\n" + rest[first.start():]


def _diff_steps(operands: list[str], options: NormalizeOptions) -> tuple[IRDiff, str, str]:
    # Imported here: diffing two files needs neither the index nor the step store.
    from workbench.diff.steps import describe, diff_steps, diff_with_previous, find_step
    from workbench.index import scan

    folder, module_query, *specs = operands
    dump = scan(Path(folder))
    module = dump.find_module(module_query)
    step_b = find_step(module, specs[-1])
    if len(specs) == 2:
        step_a = find_step(module, specs[0])
        return diff_steps(dump.root, step_a, step_b, options), _label(step_a), _label(step_b)
    position = module.steps.index(step_b)
    found = diff_with_previous(dump.root, module, position, options)
    if found is None:
        raise KeyError(f"step {step_b.index} ({describe(step_b)}) has no IR before it to "
                       "compare with (the first step of its kind); give two steps")
    diff, previous = found
    made_of = " + ".join(_label(module.steps[at]) for at in previous.positions)
    return diff, f"before {step_b.index}: {made_of}", _label(step_b)


def _label(step: Step) -> str:
    from workbench.diff.steps import describe

    return f"{step.index} {describe(step)} ({step.file})"


def _error(message: str) -> None:
    print(f"workbench diff: {message}", file=sys.stderr)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160


def _print(lines: list[str]) -> None:
    """Plain text, coloured (rich, loaded only then) when stdout is a terminal."""
    if not lines:
        return
    if not sys.stdout.isatty():
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich.text import Text

    from workbench.output.safe_text import terminal_console

    console = terminal_console(highlight=False, soft_wrap=True)
    styles = {"-": "red", "+": "green", "@": "cyan"}
    for line in lines:
        style = styles.get(line[:1], "")
        if line.startswith(("---", "+++")):
            style = "bold"
        console.print(Text(line, style=style))

"""Examples that `workbench COMMAND --help` prints after the flags (argparse's epilog).

Kept in one table rather than in each command's module so the test that parses every
example (tests/commands/test_help_examples.py) sees them all: an example that no longer parses
after a flag changes fails there, not in a user's terminal.
"""

from __future__ import annotations

import argparse

# Command -> (example command line, what it does). The top-level parser's are under "".
EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "": [
        ("workbench examples/layernorm-broken-fusion", "open the terminal app on a dump folder"),
        ("workbench triage examples/layernorm-broken-fusion", "name the pass that broke each "
         "execution"),
    ],
    "ls": [
        ("workbench ls DUMP", "the modules, steps, executions and problems"),
        ("workbench ls DUMP --check --json", "also read every file; machine-readable"),
    ],
    "show": [
        ("workbench show DUMP jit_ln --changed", "the pass timeline, steps that changed "
         "the IR marked"),
    ],
    "diff": [
        ("workbench diff DUMP jit_ln 0027 0028 --summary", "what XLA step 0028 changed, per "
         "computation"),
        ("workbench diff before.mlir after.mlir -y", "two files side by side, modulo "
         "renumbering"),
    ],
    "iree": [
        ("workbench iree run.ireereplay", "summary of a capture and its executables"),
        ("workbench iree run.ireereplay --replay --device local-sync", "replay it"),
    ],
    "replay": [
        ("workbench replay DUMP jit_ln --print-changes-only", "every step on the recorded "
         "inputs, results when they change"),
        ("workbench replay DUMP jit_ln --fake-data --seed 1", "a module with no snapshot, on "
         "seeded random inputs"),
    ],
    "bisect": [
        ("workbench bisect DUMP jit_ln", "the first pass whose result differs"),
        ("workbench bisect DUMP jit_ln --localize --json", "and the instruction it got wrong"),
    ],
    "localize": [
        ("workbench localize DUMP jit_ln 29 30", "the instruction of step 30 that departs from "
         "step 29"),
    ],
    "reduce": [
        ("workbench reduce DUMP jit_ln --out /tmp/jit_ln.reduced", "a minimal reproducer "
         "folder for a bug report"),
    ],
    "triage": [
        ("workbench triage DUMP --jobs 2", "every module x execution on two worker processes"),
        ("workbench triage DUMP --dask-workers 4 --localize", "on a local Dask cluster, naming "
         "each culprit instruction"),
    ],
    "mlir-replay": [
        ("workbench mlir-replay --mlir-compilation-trace=T.mlir-trace.pb "
         "--hlo-snapshot=S.snapshot.0.pb", "XLA's mlir_replay: the result after each pass"),
        ("workbench mlir-replay --mlir-compilation-trace-dir DUMP", "check every trace of a "
         "folder"),
    ],
    "actions": [
        ("workbench actions actions.log --pass '*CSE*'", "the actions of the CSE pass runs"),
        ("workbench actions actions.log --chrome-trace trace.json", "a trace for Perfetto"),
    ],
    "report": [
        ("workbench report timing.log", "pass timing and statistics as tables"),
    ],
    "completion": [
        ("workbench completion bash > ~/.local/share/bash-completion/completions/workbench",
         "bash completion for new shells"),
        ('eval "$(workbench completion bash)"', "for this shell only"),
    ],
}


def epilog(command: str) -> str:
    """The `--help` text after the flags: the command's examples, each with what it does."""
    lines = [_HEADING]
    for line, what in EXAMPLES.get(command, []):
        lines += [f"  {line}", f"      {what}"]
    return "\n".join(lines)


class _ExamplesKeptAsWritten(argparse.HelpFormatter):
    """Wraps the description as usual; the examples keep their lines (argparse's raw
    formatter would leave a long description as one line too)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_HEADING):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


_HEADING = "examples:"


def add_examples(parser: argparse.ArgumentParser, command: str) -> None:
    """Print `command`'s examples under its flags."""
    parser.epilog = epilog(command)
    parser.formatter_class = _ExamplesKeptAsWritten

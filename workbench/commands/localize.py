"""`workbench localize DIR MODULE A B`: which instruction of step B departs from step A's?

Evaluates both steps on an execution's inputs, keeping every intermediate value, and names
the first instruction of B whose value departs from its counterpart in A while its operands
agree (judged as verdicts are: the tolerance, else the rounding error bound).
"""

from __future__ import annotations

import argparse
import json
import sys

from workbench.commands.replay import (
    NOT_JUDGED_HELP,
    NOT_JUDGED_STATUS,
    UsageError,
    add_module_arguments,
    open_replay,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "localize", help="name the instruction whose value departs between two steps",
        description="Evaluate steps A and B of a module on an execution's inputs and name the "
        "first instruction of B whose value departs from its counterpart in A while its "
        "operands agree: its op_name, source line, both versions of its text and the first "
        "differing elements. Exit status 1 when an instruction departs." + NOT_JUDGED_HELP)
    add_module_arguments(parser)
    parser.add_argument("a", metavar="A", help="the earlier step: timeline index, XLA step "
                        "number (0027) or pass name")
    parser.add_argument("b", metavar="B", help="the later step")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.diff.steps import find_step
    from workbench.replay.localize.culprit import localize_backend_steps
    from workbench.replay.localize.result import LocalizeError, NotJudged
    from workbench.replay.localize.text import localization_lines

    try:
        selection = open_replay(args)
        module = selection.module
        try:
            a, b = find_step(module, args.a), find_step(module, args.b)
        except KeyError as error:
            raise UsageError(error.args[0]) from None
        if a.index >= b.index:
            raise UsageError(f"step {args.a} must come before step {args.b}")
        result = localize_backend_steps(selection.replay.backend, a, b,
                                        selection.replay.inputs.arguments)
    except (UsageError, LocalizeError) as error:
        print(f"workbench localize: {error}", file=sys.stderr)
        return NOT_JUDGED_STATUS if isinstance(error, NotJudged) else 2
    if args.json:
        from workbench.output.json_shapes import localization_json

        payload = {"module": module.key, "name": module.name,
                   "execution": selection.execution.id if selection.execution else None,
                   "inputs": selection.replay.inputs.origin, **localization_json(result)}
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n".join(localization_lines(result)))
        spilled = (f", {result.spilled_bytes / 2**20:.1f} MB spilled to disk beyond the memory "
                   "limit" if result.spilled_bytes else "")
        print(f"{result.evaluations} evaluations, {result.seconds:.2f} s, "
              f"{result.kept_bytes / 2**20:.1f} MB of values kept at most{spilled}.")
    return 1 if result.found else 0

"""A minimal reproducer of a localized departure: a dump folder with two tiny modules.

The culprit instruction departs while its operands agree, so what its value depends on, within
the pass's change, is the instruction alone: the reduced modules keep it (with the
computations it calls, and inside a fusion when it was in one), and the values flowing into
it (its operands) become entry parameters. The folder holds

- the module before the pass and after it, as XLA text dumps named like the original steps
  (so `workbench replay`, `bisect` and `triage` read the folder and name the same pass), in
  the HLO text `run_hlo_module` parses;
- an HloSnapshot (`module_NNNN.<name>.snapshot.0.pb`) with the operands' values (the earlier
  step's) as arguments and the earlier step's value of the instruction as the result.

The reduction is checked before it is reported: the reduced "before" must agree with the
original reference's value, and a bisection of the folder must find the same departure.
MLIR culprits are reduced alike to a two-pass trace (`reduce_mlir.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from workbench.destinations import OutputFolder, check_folder
from workbench.hlo_ir import HloModule, Instruction, LiteralValue, Shape
from workbench.model import Step
from workbench.replay.judge.compare import compare
from workbench.replay.localize.match import Site
from workbench.replay.localize.result import Localization, LocalizeError
from workbench.replay.localize.text import instruction_line, step_lines
from workbench.replay.reduce.reduction import README, Reduction, bisect_folder, readme_text


def _block(lines: list[str], name: str) -> list[str]:
    """The lines of computation `name` (header to closing brace) in an HLO text dump."""
    header = re.compile(rf"^(?:ENTRY\s+)?%?{re.escape(name)}\s")
    for start, line in enumerate(lines):
        if header.match(line) and line.rstrip().endswith("{"):
            end = start
            while end < len(lines) and lines[end].rstrip() != "}":
                end += 1
            return [text.rstrip() for text in lines[start:end + 1]]
    raise LocalizeError(f"computation {name} not found in the text dump")


def _source_tables(lines: list[str]) -> list[str]:
    """The FileNames ... StackFrames tables after the HloModule line (metadata refers to them)."""
    tables: list[str] = []
    for line in lines[1:]:
        if line.startswith(("%", "ENTRY")) or (line and not line[0].isspace()
                                                and line.rstrip().endswith("{")):
            break
        tables.append(line.rstrip())
    while tables and not tables[-1]:
        tables.pop()
    while tables and not tables[0]:
        tables.pop(0)
    return tables


def _operand_span(line: str, opcode: str) -> tuple[int, int]:
    """Where the operand list of `opcode(...)` is in an instruction line (inside the parens)."""
    match = re.search(rf"\s{re.escape(opcode)}\(", line)
    if match is None:
        raise LocalizeError(f"cannot find the operands of {opcode} in: {line.strip()}")
    start = match.end()
    depth = 1
    for position in range(start, len(line)):
        if line[position] in "({[":
            depth += 1
        elif line[position] in ")}]":
            depth -= 1
            if depth == 0:
                return start, position
    raise LocalizeError(f"unbalanced operand list in: {line.strip()}")


def _rewrite(line: str, instruction: Instruction, operands: list[str], root: bool) -> str:
    """The instruction's line with new operand names (and ROOT when it is the root)."""
    text = re.sub(r"^\s*(ROOT\s+)?", "", line)
    if instruction.operands:
        start, end = _operand_span(text, instruction.opcode)
        text = text[:start] + ", ".join(f"%{o}" for o in operands) + text[end:]
    return ("ROOT " if root else "") + text


def _layout_free(shape: Shape) -> str:
    return str(shape).split("{")[0] if not shape.is_tuple else str(shape)


def module_text(name: str, module: HloModule, lines: list[str], site: Site,
                parameters: list[Shape], operand_parameters: list[int]) -> tuple[str, int]:
    """A module computing only `site`'s instruction from entry parameters, with the
    instruction's line verbatim but for its operands; wrapped in a fusion when it was in one.
    Returns the text and its instruction count."""
    instruction = site.instruction
    number = instruction_line(lines, instruction.name)
    if number is None:
        raise LocalizeError(f"{instruction.name} is not in the step's text dump")
    caller = None
    if site.key[0]:
        caller_name = site.key[0][-1][0]
        for candidate in module.computations:
            found = candidate.by_name.get(caller_name)
            if found is not None and found.opcode == "fusion":
                caller = found
                break
    blocks: list[str] = []
    for callee in module.callees(instruction):
        blocks.extend(["", *_block(lines, callee)])
    params = [f"input.{i}" for i in range(len(parameters))]
    signature = ", ".join(f"{p}: {_layout_free(s)}" for p, s in zip(params, parameters,
                                                                      strict=True))
    result = f"{_layout_free(instruction.shape)}"
    count = 0
    if caller is None:
        body = [f"  %{p} = {s} parameter({i})" for i, (p, s) in enumerate(zip(params, parameters,
                                                                               strict=True))]
        body.append("  " + _rewrite(lines[number], instruction,
                                    [params[i] for i in operand_parameters], root=True))
        count = len(body)
        blocks.extend(["", f"ENTRY %main ({signature}) -> {result} {{", *body, "}"])
    else:
        fused = [f"fused.{i}" for i in range(len(parameters))]
        fused_signature = ", ".join(f"{p}: {_layout_free(s)}"
                                    for p, s in zip(fused, parameters, strict=True))
        body = [f"  %{p} = {s} parameter({i})" for i, (p, s) in enumerate(zip(fused, parameters,
                                                                              strict=True))]
        body.append("  " + _rewrite(lines[number], instruction,
                                    [fused[i] for i in operand_parameters], root=True))
        entry = [f"  %{p} = {s} parameter({i})" for i, (p, s) in enumerate(zip(params, parameters,
                                                                               strict=True))]
        kind = caller.fusion_kind or "kLoop"
        entry.append(f"  ROOT %{caller.name} = {instruction.shape} fusion("
                     + ", ".join(f"%{p}" for p in params)
                     + f"), kind={kind}, calls=%{site.computation.name}")
        count = len(body) + len(entry)
        blocks.extend(["", f"%{site.computation.name} ({fused_signature}) -> {result} {{",
                       *body, "}", "", f"ENTRY %main ({signature}) -> {result} {{", *entry,
                       "}"])
    layout = ("(" + ", ".join(str(s) for s in parameters) + f")->{instruction.shape}")
    header = f"HloModule {name}, entry_computation_layout={{{layout}}}"
    tables = _source_tables(lines)
    text = "\n".join([header, *(["", *tables] if tables else []), *blocks]) + "\n"
    return text, count


def _evaluate_text(text: str, arguments: list[LiteralValue], file: str) -> LiteralValue:
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.hlo import evaluate_module

    return evaluate_module(parse_hlo_text(text, file), arguments)


def reduce_to_folder(root: Path, result: Localization, module_name: str, out: Path,
                     force: bool = False) -> Reduction:
    """Write the reduced pair and snapshot of `result` to the dump folder `out` and check it
    (MLIR steps: `reduce_mlir.reduce_mlir_to_folder`). Raises `LocalizeError` when the
    localization has no culprit or cannot be reduced, and ValueError for a refused `out`
    (`output.destinations.check_folder`)."""
    from workbench.formats.literal_write import literal_to_proto
    from workbench.protos import hlo_pb2

    if result.after.ir == "mlir":
        from workbench.replay.reduce.mlir import reduce_mlir_to_folder

        return reduce_mlir_to_folder(root, result, module_name, out, force)
    if result.after.ir != "hlo":
        raise LocalizeError(f"reduction writes HLO or MLIR modules; these are {result.after.ir}"
                            " steps")
    site, other = result.site, result.counterpart_site
    expected = result.expected
    if site is None or other is None or expected is None:
        raise LocalizeError("nothing to reduce: " + (result.explanation or "no culprit"))
    check_folder(out, "--out", dumps=[root], force=force)
    keys = list(dict.fromkeys(result.operand_keys))
    for key in result.counterpart_operand_keys:
        if key not in keys:
            keys.append(key)
    missing = [k for k in keys if k not in result.values]
    if missing:
        raise LocalizeError("the earlier step's operands of the instruction were not all kept")
    arguments = [result.values[k] for k in keys]
    shapes = [result.shapes[k] for k in keys]
    after_parameters = [keys.index(k) for k in result.operand_keys]
    before_parameters = [keys.index(k) for k in result.counterpart_operand_keys]
    lines_after = step_lines(root, result.after)
    lines_before = step_lines(root, result.before)
    if lines_after is None or lines_before is None:
        raise LocalizeError("reducing needs the text dumps (.txt) of both steps")
    from workbench.loader import load_step_hlo

    before_module = load_step_hlo(root, result.before)
    after_module = load_step_hlo(root, result.after)
    before_text, before_count = module_text(module_name, before_module, lines_before, other,
                                            shapes, before_parameters)
    after_text, after_count = module_text(module_name, after_module, lines_after, site,
                                          shapes, after_parameters)
    files = [_file_name(result.before), _file_name(result.after)]
    prefix = files[0].split(".")[0] + "." + module_name
    snapshot = hlo_pb2.HloSnapshot()
    for argument, shape in zip(arguments, shapes, strict=True):
        snapshot.arguments.append(literal_to_proto(argument, shape))
    snapshot.result.CopyFrom(literal_to_proto(expected, other.instruction.shape))
    files.append(f"{prefix}.snapshot.0.pb")
    with OutputFolder(out) as folder:
        folder.write(files[0], before_text)
        folder.write(files[1], after_text)
        folder.write(files[2], snapshot.SerializeToString())
        what = f"instruction {site.instruction.name}"
        folder.write(README, readme_text(root, out, module_name, files, what,
                                         result.after.pass_name))
    reduced_before = _evaluate_text(before_text, arguments, files[0])
    reference_check = compare(expected, reduced_before)
    status, culprit, detail = bisect_folder(out)
    return Reduction(out, files, (before_count, after_count), reference_check, status,
                     culprit, detail)


def _file_name(step: Step) -> str:
    source = step.text
    assert source is not None
    return Path(source.file).name

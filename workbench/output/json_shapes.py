"""Every `--json` shape the commands print, built in one place from the model and outcomes.

The shapes are the documented ones (README); a change to a shape is a change here.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii as _encode
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only attributes are read: importing this module costs no reader
    from workbench.diff.ir_diff import IRDiff
    from workbench.external_tools import ToolResult
    from workbench.formats.action_log import Action, ActionLog
    from workbench.formats.iree_replay import ReplayDump, ReplayRecord
    from workbench.formats.mlir_reports import Reports, StatisticsNode, TimingNode
    from workbench.model import Dump, Module, Problem, Step
    from workbench.replay.bisect import Verdict
    from workbench.replay.judge.compare import Comparison
    from workbench.replay.judge.culprit import Culprit, CulpritInstruction
    from workbench.replay.localize.result import InstructionRef, Localization
    from workbench.replay.reduce.reduction import Reduction
    from workbench.replay.steps import StepResult
    from workbench.replay.triage.run import TriageResult

# --- ls ---------------------------------------------------------------------------------
# `ls --json` is written as it is built, one module at a time: the text is exactly
# `json.dumps(dump_json(dump))` (the test suite checks it), made without the dicts.

_json_scalar = json.JSONEncoder().encode


def module_json(module: Module) -> dict[str, Any]:
    """A module: its timeline, executions and artifacts (the shape scripts rely on, documented
    in the README)."""
    return {
        "id": module.id,
        "key": module.key,
        "name": module.name,
        "format": module.format,
        "steps": [step_json(step) for step in module.steps],
        "executions": [
            {"id": execution.id, "file": execution.file, "kind": execution.kind}
            for execution in module.executions
        ],
        "artifacts": [
            {"kind": artifact.kind, "file": artifact.file, "label": artifact.label}
            for artifact in module.artifacts
        ],
    }


def dump_json(dump: Dump) -> dict:
    return {
        "root": str(dump.root),
        "modules": [module_json(module) for module in dump.modules],
        "problems": problems_json(dump.problems),
        "others": dump.others,
    }


def _value(value: object) -> str:
    """One JSON scalar as `json.dumps` writes it."""
    return _json_scalar(value) if value is not None else "null"


_STEP = (
    '{"index": %d, "pass": %s, "pipeline": %s, "xla_step": %s, "file": %s, "changed": %s, '
    '"kind": %s, "ir": %s, "scope": %s, "target": %s, "argument": %s, "options": %s, '
    '"pair": %s, "timing_s": %s}'
)


def _step_text(step: Step) -> str:
    pipeline, xla_step, file = step.pipeline, step.xla_step, step.file
    if step.changed is None and step.scope is None and step.target is None and \
            step.argument is None and step.options is None and step.pair is None and \
            step.timing_s is None:
        # The fields XLA steps leave None (most steps of a large dump) written in; an f-string
        # (a third cheaper than `_STEP`'s `%` on tens of thousands of steps).
        return (
            f'{{"index": {int.__repr__(step.index)}, "pass": {_encode(step.pass_name)}, '
            f'"pipeline": {"null" if pipeline is None else _encode(pipeline)}, '
            f'"xla_step": {"null" if xla_step is None else int.__repr__(xla_step)}, '
            f'"file": {"null" if file is None else _encode(file)}, "changed": null, '
            f'"kind": {_encode(step.kind)}, "ir": {_encode(step.ir)}, "scope": null, '
            '"target": null, "argument": null, "options": null, "pair": null, '
            '"timing_s": null}'
        )
    return _STEP % (
        step.index, _encode(step.pass_name), _value(pipeline), _value(xla_step),
        _value(file), _value(step.changed), _encode(step.kind), _encode(step.ir),
        _value(step.scope), _value(step.target), _value(step.argument), _value(step.options),
        _value(step.pair), _value(step.timing_s),
    )


def module_json_text(module: Module) -> str:
    """`json.dumps(module_json(module))`, made directly."""
    executions = ", ".join([
        f'{{"id": {_encode(e.id)}, "file": {_encode(e.file)}, "kind": {_encode(e.kind)}}}'
        for e in module.executions])
    artifacts = ", ".join([
        f'{{"kind": {_encode(a.kind)}, "file": {_encode(a.file)}, "label": {_encode(a.label)}}}'
        for a in module.artifacts])
    return (
        f'{{"id": {_encode(module.id)}, "key": {_encode(module.key)}, '
        f'"name": {_encode(module.name)}, "format": {_encode(module.format)}, '
        f'"steps": [{", ".join([_step_text(step) for step in module.steps])}], '
        f'"executions": [{executions}], "artifacts": [{artifacts}]}}'
    )


def write_dump_json(dump: Dump, write: Callable[[str], object]) -> None:
    """Write `json.dumps(dump_json(dump))` with `write`, a module at a time."""
    write(f'{{"root": {_encode(str(dump.root))}, "modules": [')
    for number, module in enumerate(dump.modules):
        write(module_json_text(module) if number == 0 else ", " + module_json_text(module))
    problems = ", ".join([f'{{"file": {_encode(p.file)}, "reason": {_encode(p.reason)}}}'
                          for p in dump.problems])
    others = ", ".join([_encode(other) for other in dump.others])
    write(f'], "problems": [{problems}], "others": [{others}]}}')

# --- show, diff -------------------------------------------------------------------------
# (the module, step and problem shapes are the `ls --json` ones: `show --json` is one module of
# that listing, and the replay commands name steps with `step_ref_json`)


def print_json(payload: object) -> None:
    """A command's `--json` output: indented, one trailing newline."""
    json.dump(payload, sys.stdout, indent=1)
    sys.stdout.write("\n")


def problem_json(problem: Problem) -> dict[str, Any]:
    """A file that could not be read, and why."""
    return {"file": problem.file, "reason": problem.reason}


def problems_json(problems: Iterable[Problem]) -> list[dict[str, Any]]:
    return [problem_json(problem) for problem in problems]


def step_ref_json(step: Step) -> dict[str, Any]:
    """How JSON output names a step elsewhere (culprits, replay results): the `ls --json`
    step's identifying keys."""
    return {"index": step.index, "pass": step.pass_name, "xla_step": step.xla_step,
            "file": step.file}


def step_json(step: Step) -> dict[str, Any]:
    """A step of a timeline (`changed` is null until the step has been compared)."""
    return {
        "index": step.index,
        "pass": step.pass_name,
        "pipeline": step.pipeline,
        "xla_step": step.xla_step,
        "file": step.file,
        "changed": step.changed,
        "kind": step.kind,
        "ir": step.ir,
        "scope": step.scope,
        "target": step.target,
        "argument": step.argument,
        "options": step.options,
        "pair": step.pair,
        "timing_s": step.timing_s,
    }


def show_json(module: Module, problems: Iterable[Problem]) -> dict[str, Any]:
    """`show --json`: the module, and the dump's problems."""
    return {**module_json(module), "problems": problems_json(problems)}


def diff_json(diff: IRDiff, label_a: str, label_b: str, context: int = 3) -> dict[str, Any]:
    """`diff --json`: counts, the computations/functions that changed, and the hunks (line
    numbers 1-based, of the files as printed; `a`/`b` null on the side a line is not on)."""
    from workbench.diff.ir_diff import section_counts

    sections = diff.sections()
    return {
        "a": label_a,
        "b": label_b,
        "kind": diff.a.kind,
        "equal": diff.equal,
        "normalized": not diff.a.options.is_raw,
        "removed_lines": diff.removed,
        "added_lines": diff.added,
        "sections": section_counts(sections),
        "section_changes": [
            {"name": s.name, "old_name": s.old_name, "kind": s.kind, "status": s.status,
             "removed_lines": s.removed_lines, "added_lines": s.added_lines}
            for s in sections if s.status != "unchanged"
        ],
        "hunks": [
            {"a_start": h.a_start + 1, "a_count": h.a_count, "b_start": h.b_start + 1,
             "b_count": h.b_count, "section": h.section,
             "lines": [{"op": line.op,
                        "a": None if line.a is None else line.a + 1,
                        "b": None if line.b is None else line.b + 1,
                        "text": line.text} for line in h.lines]}
            for h in diff.hunks(context)
        ],
    }


# --- replay, bisect, triage, mlir-replay ------------------------------------------------


def _number(value: Any) -> Any:
    """A JSON number: complex as [re, im], inf and nan as strings (JSON has neither)."""
    if isinstance(value, complex):
        return [_number(value.real), _number(value.imag)]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def comparison_json(c: Comparison) -> dict[str, Any]:
    """A comparison with the reference; `judged_by` and `bound` say what decided."""
    bound = c.bound
    return {
        "ok": c.ok,
        "total": c.total,
        "mismatches": c.mismatches,
        "max_abs_error": _number(c.max_abs_error),
        "max_rel_error": _number(c.max_rel_error),
        "first_mismatch": None if c.first_index is None and not c.first_element
        else {"element": list(c.first_element),
              "index": None if c.first_index is None else list(c.first_index),
              "expected": _number(c.expected_value), "actual": _number(c.actual_value)},
        "problem": c.problem,
        "tolerances": {name: {"atol": t.atol, "rtol": t.rtol}
                       for name, t in c.tolerances.items()},
        "judged_by": c.judged_by,
        "bound": None if bound is None else {
            "element": list(bound.element), "index": list(bound.index),
            "error": _number(bound.error), "bound": _number(bound.bound),
            "ratio": _number(bound.ratio), "truth": _number(bound.truth),
            "actual": _number(bound.actual), "reference": _number(bound.reference)},
        "no_bound_because": c.shadow_problem,
        "no_noise_stage_because": c.noise_problem,
        "noise_left_out": c.noise_left_out,
        "unbounded": c.unbounded,
        "widened_by": [{"instruction": d.name, "opcode": d.opcode,
                        "computation": d.computation, "op_name": d.op_name,
                        "elements": d.elements, "how": "flips" if d.flipped else "jumps"}
                       for d in c.widened_by],
        "allowance": c.allowance,
        "relations": c.relations,
        "summary": c.summary,
    }


def step_result_json(r: StepResult) -> dict[str, Any]:
    return {
        "position": r.position,
        **step_ref_json(r.step),
        "status": r.status,
        "kind": str(r.kind),
        "seconds": round(r.seconds, 6),
        "comparison": None if r.comparison is None else comparison_json(r.comparison),
    }


def verdict_json(v: Verdict) -> dict[str, Any]:
    """A bisection's verdict (`bisect --json`, and the core of each triage line)."""
    return {
        "status": str(v.status),
        "culprit": None if v.culprit is None else step_ref_json(v.culprit.step),
        "culprit_candidates": [step_ref_json(step) for step in v.candidates],
        "evaluations": v.evaluations,
        "shadow_evaluations": v.shadow_evaluations,
        "noise_evaluations": v.noise_evaluations,
        "steps": v.steps,
        "linear": v.linear,
        "detail": v.detail,
        "recorded": None if v.recorded is None else comparison_json(v.recorded),
        "contradictions": v.contradictions,
        "skipped": [{**step_ref_json(r.step), "status": r.status} for r in v.skipped],
        "results": [step_result_json(r) for r in v.results],
    }


def replay_json(module: str, name: str, execution: str | None, inputs: str, steps: int,
                recorded: Comparison | None, results: list[StepResult],
                shadow_evaluations: int) -> dict[str, Any]:
    """`workbench replay --json`."""
    return {"module": module, "name": name, "execution": execution, "inputs": inputs,
            "steps": steps, "shadow_evaluations": shadow_evaluations,
            "recorded": None if recorded is None else comparison_json(recorded),
            "results": [step_result_json(r) for r in results]}


def bisect_json(module: str, name: str, execution: str | None, inputs: str,
                verdict: Verdict) -> dict[str, Any]:
    """`workbench bisect --json`."""
    return {"module": module, "name": name, "execution": execution, "inputs": inputs,
            **verdict_json(verdict)}


def triage_result_json(r: TriageResult) -> dict[str, Any]:
    """One line of `workbench triage --json` (keys documented in the README)."""
    payload = {
        "module": r.module,
        "name": r.name,
        "execution": r.execution,
        "status": str(r.status),
        "culprit": None if r.culprit is None else culprit_json(r.culprit),
        "evaluations": r.evaluations,
        "detail": r.detail,
        "steps": r.steps,
        "seconds": round(r.seconds, 3),
    }
    verdict = r.verdict
    if verdict is not None:
        full = verdict_json(verdict)
        payload.update({key: full[key] for key in (
            "linear", "culprit_candidates", "recorded", "contradictions", "skipped",
            "shadow_evaluations", "noise_evaluations")})
    return payload


def triage_json(results: list[TriageResult], counts: dict[str, int]) -> dict[str, Any]:
    """`workbench triage --json`."""
    return {"results": [triage_result_json(r) for r in results], "summary": counts}


def mlir_replay_json(trace: str, inputs: str, passes: int, recorded: Comparison | None,
                     culprit: StepResult | None, results: list[StepResult],
                     shadow_evaluations: int) -> dict[str, Any]:
    """`workbench mlir-replay --mlir-compilation-trace FILE --json`."""
    return {"trace": trace, "inputs": inputs, "passes": passes,
            "shadow_evaluations": shadow_evaluations,
            "recorded": None if recorded is None else comparison_json(recorded),
            "culprit": None if culprit is None else {
                "index": culprit.step.index, "pass": culprit.step.pass_name},
            "results": [step_result_json(r) for r in results]}


def mlir_trace_check_json(trace: str, snapshot: str | None, command: str | None,
                          verdict: Verdict | None, problem: str | None) -> dict[str, Any]:
    """One entry of `workbench mlir-replay --mlir-compilation-trace-dir DIR --json`."""
    entry: dict[str, Any] = {"trace": trace, "snapshot": snapshot, "command": command}
    if verdict is None:
        entry.update(status="error", culprit=None, detail=problem)
        return entry
    culprit = verdict.culprit.step if verdict.culprit is not None else None
    entry.update(status=str(verdict.status), detail=verdict.detail,
                 evaluations=verdict.evaluations,
                 shadow_evaluations=verdict.shadow_evaluations,
                 culprit=None if culprit is None else
                 {"index": culprit.index, "pass": culprit.pass_name})
    return entry

# --- localize, reduce -------------------------------------------------------------------


def instruction_json(ref: InstructionRef, comparison: Comparison | None) -> dict[str, Any]:
    """The culprit instruction (`bisect --localize`, `triage --localize`, `localize`)."""
    bound = None if comparison is None or comparison.bound is None else comparison.bound.bound
    return {"name": ref.name, "computation": ref.computation, "opcode": ref.opcode,
            "op_name": ref.op_name, "source": ref.source or None,
            "max_abs_error": None if comparison is None else _number(comparison.max_abs_error),
            "bound": None if bound is None else _number(bound),
            "inside": ref.inside or None, "metadata_from": ref.metadata_from or None}


def culprit_json(c: Culprit) -> dict[str, Any]:
    """A culprit: its step as `step_ref_json` names one; localized (`--localize`), its
    `instruction` (null when no single instruction explains the departure, with
    `instruction_note` saying why)."""
    payload: dict[str, Any] = {"index": c.index, "pass": c.pass_name, "xla_step": c.xla_step,
                               "file": c.file}
    if c.localized and c.instruction is None:
        payload.update(instruction=None, instruction_note=c.instruction_note)
    elif c.localized:
        payload["instruction"] = culprit_instruction_json(c.instruction)
    return payload


def culprit_instruction_json(i: CulpritInstruction | None) -> dict[str, Any] | None:
    if i is None:
        return None
    return {"name": i.name, "computation": i.computation, "opcode": i.opcode,
            "op_name": i.op_name, "source": i.source or None,
            "max_abs_error": _number(i.max_abs_error), "bound": _number(i.bound),
            "partitions": list(i.partitions), "inside": i.inside or None,
            "metadata_from": i.metadata_from or None}


def localization_json(r: Localization) -> dict[str, Any]:
    """`workbench localize --json`: the culprit instruction, both versions, the elements."""
    def side(ref: InstructionRef | None) -> dict[str, Any] | None:
        if ref is None:
            return None
        return {"name": ref.name, "computation": ref.computation, "opcode": ref.opcode,
                "op_name": ref.op_name, "source": ref.source or None, "context": ref.context,
                "text": ref.text or None, "neighbours": ref.neighbours}

    return {
        "before": step_ref_json(r.before),
        "after": step_ref_json(r.after),
        "instruction": None if r.instruction is None
        else instruction_json(r.instruction, r.comparison),
        "after_instruction": side(r.instruction),
        "before_instruction": side(r.counterpart),
        "comparison": None if r.comparison is None else comparison_json(r.comparison),
        "elements": [{"index": list(e.index), "before": _number(e.before),
                      "after": _number(e.after), "truth": _number(e.truth),
                      "bound": _number(e.bound)} for e in r.elements],
        "explanation": r.explanation or None,
        "outputs": None if r.outputs is None else comparison_json(r.outputs),
        "matched": r.matched,
        "unmatched": r.unmatched,
        "matched_by": r.matched_by or None,
        "legal_rewrites": r.legal_rewrites,
        "beyond_tolerance": r.beyond_tolerance,
        "departing": r.departing,
        "partitions": list(r.partitions),
        "evaluations": r.evaluations,
        "seconds": round(r.seconds, 6),
        "kept_bytes": r.kept_bytes,
        "spilled_bytes": r.spilled_bytes,
    }


def reduction_json(r: Reduction) -> dict[str, Any]:
    """`workbench reduce --json`: where the folder is and what its checks found."""
    return {"out": str(r.out), "ir": r.ir, "files": r.files,
            "instructions": {"before": r.instructions[0], "after": r.instructions[1]},
            "reference_check": comparison_json(r.reference_check),
            "verdict": r.verdict_status, "culprit": r.culprit_pass or None,
            "reproduces": r.reproduces, "detail": r.detail}

# --- actions, report, iree --------------------------------------------------------------


def action_json(action: Action) -> dict[str, Any]:
    """One action (children by index, to keep the output flat)."""
    return {
        "index": action.index,
        "thread": action.thread,
        "tag": action.tag,
        "printed": action.printed,
        "pass": action.pass_name,
        "operation": action.operation,
        "pattern": action.pattern,
        "ir": action.units,
        "breakpoint": action.breakpoint,
        "skipped": action.skipped,
        "completed": action.completed,
        "line": action.line,
        "end_line": action.end_line,
        "depth": action.depth,
        "parent": action.parent.index if action.parent else None,
        "children": [child.index for child in action.children],
        "locations": [f"{f}:{line}:{col}" for f, line, col in action.locations],
    }


def actions_json(file: str, log: ActionLog, chosen: Iterable[Action]) -> dict[str, Any]:
    """`actions --json`: the chosen actions, the log's tags, counts and problems."""
    return {
        "file": file,
        "actions": [action_json(a) for a in chosen],
        "tags": log.tags(),
        "total": len(log.actions),
        "open": len(log.open_actions),
        "problems": problems_json(log.problems),
    }


def timing_json(node: TimingNode) -> dict[str, Any]:
    return {
        "name": node.name, "wall_s": node.wall_s, "user_s": node.user_s,
        "wall_percent": node.wall_percent, "user_percent": node.user_percent,
        "analysis": node.analysis, "pipeline": node.pipeline,
        "children": [timing_json(child) for child in node.children],
    }


def statistics_json(node: StatisticsNode) -> dict[str, Any]:
    return {
        "name": node.name, "pipeline": node.pipeline,
        "statistics": [{"name": s.name, "value": s.value, "description": s.description}
                       for s in node.statistics],
        "children": [statistics_json(child) for child in node.children],
    }


def report_json(file: str, reports: Reports) -> dict[str, Any]:
    """`report --json`: every timing and statistics report of the file, as trees."""
    return {
        "file": file,
        "timing": [{
            "line": t.line, "total_s": t.total_s, "columns": t.columns, "view": t.view,
            "rows": [timing_json(n) for n in t.roots],
            "rest": timing_json(t.rest) if t.rest else None,
            "total": timing_json(t.total) if t.total else None,
        } for t in reports.timing],
        "statistics": [{"line": s.line, "view": s.view,
                        "passes": [statistics_json(n) for n in s.roots]}
                       for s in reports.statistics],
        "problems": problems_json(reports.problems),
    }


def iree_summary_json(dump: ReplayDump) -> dict[str, Any]:
    """`iree --json`: the capture's summary and executables."""
    summary = dump.summary
    return {
        "file": dump.file,
        "summary": {
            "version": summary.version,
            "file_length": summary.file_length,
            "hermetic": summary.hermetic,
            "environment_referenced": summary.environment_referenced,
            "strict_replay_supported": summary.strict_replay_supported,
            "record_count": summary.record_count,
            "object_count": summary.object_count,
            "operation_count": summary.operation_count,
            "unsupported_count": summary.unsupported_count,
            "scope_begin_count": summary.scope_begin_count,
            "scope_end_count": summary.scope_end_count,
            "scopes": summary.scopes,
            "files": summary.files,
            "file_validation": summary.file_validation,
        },
        "executables": [
            {"id": e.id, "format": e.format, "function_count": e.function_count,
             "data_length": e.data_length, "prepared_at": e.prepared_at}
            for e in dump.executables
        ],
    }


def iree_records_json(file: str, kind: str | None, operation: str | None, scope: str | None,
                      records: Iterable[ReplayRecord]) -> dict[str, Any]:
    """`iree --records --json`: the tool's rows with the scopes open around each added."""
    return {
        "file": file,
        "filter": {"kind": kind, "operation": operation, "scope": scope},
        "records": [{**record.row, "scopes": list(record.scopes)} for record in records],
    }


def iree_replay_json(file: str, result: ToolResult, output: list[str]) -> dict[str, Any]:
    """`iree --replay --json`: how `iree-run-replay` ended, and what it printed."""
    return {
        "file": file,
        "command": list(result.command),
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "status_code": result.status_code,
        "message": result.message,
        "duration_s": round(result.duration_s, 3),
        "output": output,
    }


def iree_error_json(file: str, message: str) -> dict[str, Any]:
    """`iree --json` when it cannot do what was asked."""
    return {"file": file, "error": message}

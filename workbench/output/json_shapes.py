"""Every `--json` shape the commands print, built in one place from the model and outcomes.

The shapes are the documented ones (README); a change to a shape is a change here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only attributes are read: importing this module costs no reader
    from workbench.diff.ir_diff import IRDiff
    from workbench.external_tools import ToolResult
    from workbench.formats.action_log import Action, ActionLog
    from workbench.formats.iree_replay import ReplayDump, ReplayRecord
    from workbench.formats.mlir_reports import Reports, StatisticsNode, TimingNode
    from workbench.model import Module, Problem, Step

# --- ls ---------------------------------------------------------------------------------

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


def module_json(module: Module) -> dict[str, Any]:
    """A module: its timeline, executions and artifacts."""
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

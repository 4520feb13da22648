"""Every `--json` shape the commands print, built in one place from the model and outcomes.

The shapes are the documented ones (README); a change to a shape is a change here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.model import Step
    from workbench.replay.bisect import Verdict
    from workbench.replay.compare import Comparison
    from workbench.replay.localize import InstructionRef, Localization
    from workbench.replay.reduce import Reduction
    from workbench.replay.steps import StepResult
    from workbench.replay.triage import TriageResult

# --- ls ---------------------------------------------------------------------------------

# --- show, diff -------------------------------------------------------------------------

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
        "summary": c.summary,
    }


def step_ref_json(step: Step) -> dict[str, Any]:
    """How a step is named (the `ls --json` step keys)."""
    return {"index": step.index, "pass": step.pass_name, "xla_step": step.xla_step,
            "file": step.file}


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
        "culprit": r.culprit,
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
            "shadow_evaluations")})
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
            "bound": None if bound is None else _number(bound)}


def localized_culprit_json(r: Localization | str | None) -> dict[str, Any]:
    """What `--localize` adds to a culprit: `instruction` (null when no single instruction
    explains the departure, with `instruction_note` saying why)."""
    if r is None:
        return {"instruction": None, "instruction_note": "not localized"}
    if isinstance(r, str):
        return {"instruction": None, "instruction_note": r}
    if r.instruction is None:
        return {"instruction": None, "instruction_note": r.explanation}
    return {"instruction": instruction_json(r.instruction, r.comparison)}


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
        "beyond_tolerance": r.beyond_tolerance,
        "departing": r.departing,
        "evaluations": r.evaluations,
        "seconds": round(r.seconds, 6),
        "kept_bytes": r.kept_bytes,
    }


def reduction_json(r: Reduction) -> dict[str, Any]:
    """`workbench reduce --json`: where the folder is and what its checks found."""
    return {"out": str(r.out), "files": r.files,
            "instructions": {"before": r.instructions[0], "after": r.instructions[1]},
            "reference_check": comparison_json(r.reference_check),
            "verdict": r.verdict_status, "culprit": r.culprit_pass or None,
            "reproduces": r.reproduces, "detail": r.detail}

# --- actions, report, iree --------------------------------------------------------------

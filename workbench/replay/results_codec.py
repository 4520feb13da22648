"""Triage results as plain JSON data and back, for the results cache: no pickle, nothing that
names a class or runs code on reading. Decoding checks every field's type and every step a
verdict names against the job's module, and raises `BadEntry` for anything else.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from workbench.replay.bisect import Verdict
from workbench.replay.compare import BoundCheck, Comparison, Tolerance
from workbench.replay.outcome import Kind, Outcome
from workbench.replay.steps import StepResult
from workbench.replay.triage_job import TriageResult

if TYPE_CHECKING:
    from workbench.model import Module, Step


class BadEntry(ValueError):
    """Data that is not a result this version writes; the message says what is wrong."""


# ------------------------------------------------------------------------------ encoding


def _scalar(value: Any) -> Any:
    """A number of a comparison (bool, int, float, complex, or None) as JSON data."""
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, complex)):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    raise TypeError(f"not a number: {type(value).__name__}")


def _comparison(c: Comparison | None) -> dict | None:
    if c is None:
        return None
    b = c.bound
    return {
        "ok": bool(c.ok), "total": int(c.total), "mismatches": int(c.mismatches),
        "max_abs_error": float(c.max_abs_error), "max_rel_error": float(c.max_rel_error),
        "first_element": [int(i) for i in c.first_element],
        "first_index": None if c.first_index is None else [int(i) for i in c.first_index],
        "expected_value": _scalar(c.expected_value), "actual_value": _scalar(c.actual_value),
        "problem": c.problem,
        "tolerances": {name: [float(t.atol), float(t.rtol)] for name, t in c.tolerances.items()},
        "bound": None if b is None else {
            "element": [int(i) for i in b.element], "index": [int(i) for i in b.index],
            "error": float(b.error), "bound": float(b.bound), "truth": _scalar(b.truth),
            "actual": _scalar(b.actual), "reference": _scalar(b.reference)},
        "shadow_problem": c.shadow_problem,
    }


def _outcome(o: Outcome | None) -> dict | None:
    if o is None:
        return None
    return {"kind": str(o.kind), "reason": o.reason, "culprit": o.culprit,
            "comparison": _comparison(o.comparison)}


def _step(step: Step | None) -> int | None:
    return None if step is None else step.index


def _step_result(r: StepResult | None) -> dict | None:
    if r is None:
        return None
    return {"position": r.position, "step": r.step.index, "outcome": _outcome(r.outcome),
            "seconds": float(r.seconds)}


def _verdict(v: Verdict | None) -> dict | None:
    if v is None:
        return None
    return {
        "status": str(v.status), "evaluations": v.evaluations, "steps": v.steps,
        "linear": v.linear, "inputs": v.inputs, "reference": _step(v.reference),
        "reference_outcome": _outcome(v.reference_outcome), "culprit": _step_result(v.culprit),
        "candidates": [s.index for s in v.candidates], "recorded": _comparison(v.recorded),
        "first_bad": _step(v.first_bad), "passing_again": [s.index for s in v.passing_again],
        "skipped": [_step_result(r) for r in v.skipped], "frontier": _step(v.frontier),
        "untested": v.untested, "results": [_step_result(r) for r in v.results],
        "shadow_evaluations": v.shadow_evaluations,
    }


def encode_result(result: TriageResult) -> dict[str, Any]:
    """`result` as JSON data (`decode_result` reads it back); TypeError for what it cannot
    hold."""
    return {
        "module": result.module, "name": result.name, "execution": result.execution,
        "status": str(result.status), "culprit": result.culprit,
        "evaluations": result.evaluations, "detail": result.detail,
        "seconds": float(result.seconds), "steps": result.steps,
        "verdict": _verdict(result.verdict),
    }


# ------------------------------------------------------------------------------ decoding


class _Reader:
    """Typed reads of one entry's data, against the steps of the job's module."""

    def __init__(self, module: Module) -> None:
        self.steps = module.steps

    @staticmethod
    def of(data: Any, kind: type | tuple[type, ...], what: str) -> Any:
        # bool is an int to Python: a count or an index must not be true or false.
        if isinstance(data, bool) and kind in (int, float):
            raise BadEntry(f"{what}: expected {kind.__name__}, found a boolean")
        if kind is float and isinstance(data, int):
            return float(data)
        if not isinstance(data, kind):
            raise BadEntry(f"{what}: unexpected {type(data).__name__}")
        return data

    def fields(self, data: Any, names: set[str], what: str) -> dict:
        data = self.of(data, dict, what)
        if set(data) != names:
            raise BadEntry(f"{what}: fields {sorted(data)} are not {sorted(names)}")
        return data

    def optional(self, data: Any, kind: type, what: str) -> Any:
        return None if data is None else self.of(data, kind, what)

    def count(self, data: Any, what: str) -> int:
        value = self.of(data, int, what)
        if value < 0:
            raise BadEntry(f"{what}: negative")
        return value

    def ints(self, data: Any, what: str) -> tuple[int, ...]:
        return tuple(self.of(i, int, what) for i in self.of(data, list, what))

    def kind(self, data: Any, what: str) -> Kind:
        try:
            return Kind(self.of(data, str, what))
        except ValueError:
            raise BadEntry(f"{what}: no status {data!r}") from None

    def scalar(self, data: Any, what: str) -> Any:
        if data is None or isinstance(data, (bool, int, float)):
            return data
        parts = self.fields(data, {"complex"}, what)["complex"]
        real, imag = (self.of(p, float, what) for p in self.of(parts, list, what))
        return complex(real, imag)

    def step(self, data: Any, what: str) -> Step:
        index = self.of(data, int, what)
        if not 0 <= index < len(self.steps) or self.steps[index].index != index:
            raise BadEntry(f"{what}: the module has no step {index}")
        return self.steps[index]

    def optional_step(self, data: Any, what: str) -> Step | None:
        return None if data is None else self.step(data, what)

    def comparison(self, data: Any, what: str) -> Comparison | None:
        if data is None:
            return None
        d = self.fields(data, {"ok", "total", "mismatches", "max_abs_error", "max_rel_error",
                               "first_element", "first_index", "expected_value",
                               "actual_value", "problem", "tolerances", "bound",
                               "shadow_problem"}, what)
        tolerances = {}
        for name, pair in self.of(d["tolerances"], dict, what).items():
            atol, rtol = (self.of(x, float, what) for x in self.of(pair, list, what))
            tolerances[name] = Tolerance(atol, rtol)
        bound = None
        if d["bound"] is not None:
            b = self.fields(d["bound"], {"element", "index", "error", "bound", "truth",
                                         "actual", "reference"}, what + " bound")
            bound = BoundCheck(self.ints(b["element"], what), self.ints(b["index"], what),
                               self.of(b["error"], float, what),
                               self.of(b["bound"], float, what), self.scalar(b["truth"], what),
                               self.scalar(b["actual"], what),
                               self.scalar(b["reference"], what))
        return Comparison(
            ok=self.of(d["ok"], bool, what), total=self.count(d["total"], what),
            mismatches=self.count(d["mismatches"], what),
            max_abs_error=self.of(d["max_abs_error"], float, what),
            max_rel_error=self.of(d["max_rel_error"], float, what),
            first_element=self.ints(d["first_element"], what),
            first_index=None if d["first_index"] is None else self.ints(d["first_index"], what),
            expected_value=self.scalar(d["expected_value"], what),
            actual_value=self.scalar(d["actual_value"], what),
            problem=self.optional(d["problem"], str, what), tolerances=tolerances, bound=bound,
            shadow_problem=self.optional(d["shadow_problem"], str, what))

    def outcome(self, data: Any, what: str) -> Outcome | None:
        if data is None:
            return None
        d = self.fields(data, {"kind", "reason", "culprit", "comparison"}, what)
        return Outcome(self.kind(d["kind"], what), self.of(d["reason"], str, what),
                       self.of(d["culprit"], str, what), self.comparison(d["comparison"], what))

    def step_result(self, data: Any, what: str) -> StepResult | None:
        if data is None:
            return None
        d = self.fields(data, {"position", "step", "outcome", "seconds"}, what)
        outcome = self.outcome(d["outcome"], what)
        if outcome is None:
            raise BadEntry(f"{what}: a step result without an outcome")
        return StepResult(self.count(d["position"], what), self.step(d["step"], what), outcome,
                          self.of(d["seconds"], float, what))

    def step_results(self, data: Any, what: str) -> list[StepResult]:
        return [self.step_result(r, what) for r in self.of(data, list, what)]  # type: ignore[misc]

    def verdict(self, data: Any) -> Verdict | None:
        if data is None:
            return None
        d = self.fields(data, {"status", "evaluations", "steps", "linear", "inputs",
                               "reference", "reference_outcome", "culprit", "candidates",
                               "recorded", "first_bad", "passing_again", "skipped",
                               "frontier", "untested", "results", "shadow_evaluations"},
                        "verdict")
        verdict = Verdict(
            self.kind(d["status"], "verdict status"), self.count(d["evaluations"], "evaluations"),
            self.count(d["steps"], "steps"), self.of(d["linear"], bool, "linear"),
            inputs=self.of(d["inputs"], str, "inputs"),
            reference=self.optional_step(d["reference"], "reference"),
            reference_outcome=self.outcome(d["reference_outcome"], "reference outcome"),
            culprit=self.step_result(d["culprit"], "culprit"),
            candidates=[self.step(s, "candidate") for s in self.of(d["candidates"], list, "")],
            recorded=self.comparison(d["recorded"], "recorded"),
            first_bad=self.optional_step(d["first_bad"], "first bad"),
            passing_again=[self.step(s, "passing again")
                           for s in self.of(d["passing_again"], list, "passing again")],
            skipped=self.step_results(d["skipped"], "skipped"),
            frontier=self.optional_step(d["frontier"], "frontier"),
            untested=self.count(d["untested"], "untested"),
            results=self.step_results(d["results"], "results"),
            shadow_evaluations=self.count(d["shadow_evaluations"], "shadow evaluations"))
        if verdict.passing_again and verdict.first_bad is None:
            raise BadEntry("verdict: steps pass again after no failing step")
        return verdict

    def culprit(self, data: Any) -> dict | None:
        """The culprit as `triage --json` shows it (a step reference, and what `--localize`
        adds): the fields the command prints are checked."""
        if data is None:
            return None
        d = self.of(data, dict, "culprit")
        step = self.step(d.get("index"), "culprit index")
        expected = {"index": step.index, "pass": step.pass_name, "xla_step": step.xla_step,
                    "file": step.file}
        if {name: d.get(name) for name in expected} != expected:
            raise BadEntry("culprit: not the step it names")
        if set(d) - {*expected, "instruction", "instruction_note"}:
            raise BadEntry(f"culprit: unexpected fields {sorted(set(d) - set(expected))}")
        self.optional(d.get("instruction_note"), str, "instruction note")
        instruction = self.optional(d.get("instruction"), dict, "instruction")
        if instruction is not None:
            for name in ("name", "opcode", "computation"):
                self.of(instruction.get(name), str, f"instruction {name}")
            for name in ("op_name", "source"):
                self.optional(instruction.get(name), str, f"instruction {name}")
        return d


def decode_result(data: Any, module: Module) -> TriageResult:
    """The result `encode_result` wrote, for a job of `module`; raises `BadEntry` for data of
    another shape, or naming steps the module does not have, or contradicting itself."""
    read = _Reader(module)
    d = read.fields(data, {"module", "name", "execution", "status", "culprit", "evaluations",
                           "detail", "seconds", "steps", "verdict"}, "result")
    seconds = read.of(d["seconds"], float, "seconds")
    result = TriageResult(
        read.of(d["module"], str, "module"), read.of(d["name"], str, "name"),
        read.optional(d["execution"], str, "execution"), read.kind(d["status"], "status"),
        culprit=read.culprit(d["culprit"]), evaluations=read.count(d["evaluations"], "evaluations"),
        detail=read.of(d["detail"], str, "detail"),
        seconds=seconds if math.isfinite(seconds) else 0.0,
        steps=read.count(d["steps"], "steps"), verdict=read.verdict(d["verdict"]), cached=True)
    verdict = result.verdict
    if verdict is not None:
        # What the command prints and its exit status come from these: they must agree with
        # the verdict they summarise.
        culprit_index = None if result.culprit is None else result.culprit["index"]
        verdict_culprit = None if verdict.culprit is None else verdict.culprit.step.index
        if verdict.status != result.status or culprit_index != verdict_culprit \
                or verdict.evaluations != result.evaluations or verdict.detail != result.detail:
            raise BadEntry("the result does not agree with its verdict")
    elif result.culprit is not None:
        raise BadEntry("a culprit without a verdict")
    return result

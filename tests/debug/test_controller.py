"""Stepping over real pipelines: breakpoints of every kind, step/next/finish/skip/continue."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.debug.breakpoints import BreakpointList
from workbench.debug.controller import Stepper, nesting_depth
from workbench.debug.facts import DumpFacts
from workbench.index import scan
from workbench.model import Step
from workbench.replay.judge.outcome import Kind

LN = "xla/layernorm-broken-fusion"


@pytest.fixture
def ln_stepper(corpus: Path) -> Stepper:
    dump = scan(corpus / LN)
    ln = dump.find_module("jit_ln")
    return Stepper(ln.steps, BreakpointList(), DumpFacts(dump.root, ln))


@pytest.mark.parametrize("spec", ["pass:^fusion$", "op:fusion", "op:sqrt", "op-change:rsqrt"])
def test_continue_stops_at_the_fusion_step(ln_stepper: Stepper, spec: str) -> None:
    breakpoint_ = ln_stepper.breakpoints.add(spec)
    stop = ln_stepper.continue_()
    assert stop.reason == "breakpoint" and stop.hits == [breakpoint_]
    assert ln_stepper.current.xla_step == 28 and breakpoint_.hits == 1
    assert "0028 fusion" in stop.describe(ln_stepper.steps)


def test_location_breakpoint_stops_where_a_pass_touches_the_line(ln_stepper: Stepper) -> None:
    ln_stepper.breakpoints.add("loc:program.py:4")
    ln_stepper.go_to(1)
    stops = []
    while (stop := ln_stepper.continue_()).reason == "breakpoint":
        stops.append(ln_stepper.current)
    assert stops and all(s.pass_name != "pipeline-start" for s in stops)
    assert 28 in {s.xla_step for s in stops}  # fusion rewrites line 4 (and the bug is there)
    facts = ln_stepper.facts
    for step in stops:
        info = facts.info(step, locations=True)
        assert any(loc[0].endswith("program.py") and loc[1] == 4
                   for loc in info.changed_locations)
    assert stop.reason == "end" and ln_stepper.position == len(ln_stepper.steps) - 1


def test_mismatch_breakpoint_stops_at_the_first_mismatch_only(ln_stepper: Stepper) -> None:
    evaluated: list[int] = []

    def evaluate(step: Step) -> Kind:  # steps 30 on differ; 31 cannot be judged
        evaluated.append(step.index)
        if step.index == 31:
            return Kind.UNSUPPORTED
        return Kind.MISMATCH if step.index >= 30 else Kind.OK

    ln_stepper.evaluate = evaluate
    breakpoint_ = ln_stepper.breakpoints.add("mismatch")
    stop = ln_stepper.continue_()
    assert stop.reason == "breakpoint" and stop.hits == [breakpoint_]
    assert ln_stepper.current.index == 30 and evaluated == list(range(1, 31))
    assert ln_stepper.results[30] == Kind.MISMATCH
    assert ln_stepper.continue_().reason == "end"  # later mismatches are not the first
    ln_stepper.go_to(29)
    assert ln_stepper.step().reason == "breakpoint"  # 30 again: results are kept...
    assert evaluated.count(30) == 1  # ...not evaluated twice


def test_disabled_breakpoints_and_skip(ln_stepper: Stepper) -> None:
    breakpoint_ = ln_stepper.breakpoints.add("pass:^fusion$")
    ln_stepper.breakpoints.enable(breakpoint_.id, False)
    assert ln_stepper.continue_().reason == "end"
    ln_stepper.breakpoints.enable(breakpoint_.id)
    ln_stepper.go_to(29)
    stop = ln_stepper.skip()  # leave out 29, move to 30 (a breakpoint there still stops)
    assert ln_stepper.position == 30 and 29 in ln_stepper.skipped
    assert stop.reason == "breakpoint"
    ln_stepper.go_to(28)
    assert ln_stepper.step().position == 30  # the skipped step is passed over


def test_step_next_finish_on_nested_mlir_pipeline(corpus: Path) -> None:
    dump = scan(corpus / "mlir" / "iree-compile-jit_f")
    tree = next(m for m in dump.modules if m.format == "mlir-ir-tree")
    stepper = Stepper(tree.steps, BreakpointList(), DumpFacts(dump.root, tree))
    depths = [nesting_depth(s) for s in tree.steps[:12]]
    assert depths[:3] == [0, 0, 0] and depths[3:11] == [1] * 8 and depths[11] == 0
    stepper.go_to(2)
    assert stepper.step().position == 3  # into the function pipeline
    stepper.go_to(2)
    assert stepper.next().position == 11  # over it
    stepper.go_to(4)
    stop = stepper.finish()
    assert (stop.position, stop.reason) == (10, "pipeline-end")
    stepper.breakpoints.add("pass:^CSEPass$")
    stepper.go_to(4)
    assert stepper.finish().position == 8  # a breakpoint inside the pipeline stops first


def test_print_ir_op_scope_depth() -> None:
    assert nesting_depth(Step(0, "p", "mlir", "pass", scope="func.func @main")) == 1
    assert nesting_depth(Step(0, "p", "mlir", "pass", scope="builtin.module @m")) == 0
    assert nesting_depth(Step(0, "p", "hlo", "pass")) == 0

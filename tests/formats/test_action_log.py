"""Action logs of the corpus: counts, nesting, filters, steps, Chrome trace, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.formats.action_log import (
    chrome_trace,
    filter_actions,
    parse_action_log,
    parse_location,
    pass_runs,
    read_action_log,
    run_path,
    step_of,
    steps_of_runs,
)
from workbench.index import scan
from workbench.loader import ReadError


@pytest.fixture(scope="module")
def compile_dir(corpus: Path) -> Path:
    return corpus / "mlir" / "iree-compile-jit_f"


@pytest.fixture(scope="module")
def big(compile_dir: Path):
    return read_action_log((compile_dir / "actions.log").read_bytes(), "actions.log")


def test_counts_and_every_begin_completed(big) -> None:
    assert len(big.actions) == 15725
    assert all(a.completed for a in big.actions)
    assert big.problems == []
    assert big.tags() == {"pass-execution": 944, "apply-pattern": 14186,
                          "GreedyPatternRewriteIteration": 526, "apply-conversion": 60,
                          "walk-and-apply-patterns": 9}
    assert big.events == 2 * 15725
    assert {a.thread for a in big.actions} == {"iree-compile"}
    assert {a.breakpoint for a in big.actions} == {""}  # printed, and none hit


def test_nesting_and_fields(big) -> None:
    first = big.actions[0]
    assert (first.tag, first.pass_name, first.operation) == (
        "pass-execution", "AutoInputConversionPipelinePass", "builtin.module")
    assert first.units.startswith("module @jit_f attributes {")
    assert first.line == 1 and first.parent is None
    child = first.children[0]
    assert child.pass_name == "CheckVHLOStableHloMixUsage" and child.depth == 1
    assert child.end_line == 3
    pattern = next(a for a in big.actions if a.pattern and a.pattern.startswith("(anonymous"))
    assert pattern.tag == "apply-pattern"
    assert pattern.parent.tag == "GreedyPatternRewriteIteration"
    assert pattern.pass_run().tag == "pass-execution"
    assert [a.tag for a in pattern.backtrace()][:2] == ["apply-pattern",
                                                        "GreedyPatternRewriteIteration"]
    # op text spanning several lines is kept whole
    multi = [a for a in big.actions if "\n" in a.units]
    assert len(multi) == 216
    assert multi[0].line == 3702
    assert multi[0].units.startswith("%0 = flow.dispatch.workgroups(")
    assert multi[0].units.endswith(">>) {...}")
    assert not any("[thread " in a.units for a in multi)


def test_filters(big) -> None:
    canonicalize = filter_actions(big.actions, pass_name="CanonicalizerPass")
    runs = [a for a in canonicalize if a.tag == "pass-execution"]
    assert len(runs) == 95
    assert all(any(b.pass_name == "CanonicalizerPass" for b in a.backtrace())
               for a in canonicalize)
    patterns = filter_actions(big.actions, tag="apply-*", pass_name="*Canonicalizer*")
    assert patterns and {a.tag for a in patterns} <= {"apply-pattern", "apply-conversion"}
    assert filter_actions(big.actions, tag="nothing-like-this") == []


def test_location_filter_on_debuginfo_units(compile_dir: Path) -> None:
    """The corpus logs print IR without locations; a log whose op text carries them (a real
    line with a location copied in from the corpus's debug-info IR) is filtered by them."""
    text = (compile_dir / "actions.log").read_text().splitlines(keepends=True)[:3]
    located = text[1].replace("{...})`", '{...}) loc("input.mlir":3:10))`')
    log = parse_action_log("".join([text[0], located, text[2]]), "a.log")
    assert log.actions[1].locations == [("input.mlir", 3, 10)]
    assert filter_actions(log.actions, location="input.mlir:3") == [log.actions[1]]
    assert filter_actions(log.actions, location="input.mlir:3:11") == []
    assert parse_location("dir/f.py:12:4") == ("dir/f.py", 12, 4)
    assert parse_location("f.py") == ("f.py", None, None)


def test_runs_join_the_ir_tree_steps(big, compile_dir: Path) -> None:
    dump = scan(compile_dir)
    tree = dump.find_module("ir-tree/builtin_module_jit_f")
    assert len(pass_runs(big)) == 912
    joined = steps_of_runs(big, tree.steps)
    assert len(joined) == 912
    runs = pass_runs(big)
    assert all(joined[r.index].pass_name == r.pass_name for r in runs)
    # the nesting of each run (from its enclosing runs) is the step's scope, except where a
    # pass ran a nested pipeline itself, without pass runs in between
    assert sum(run_path(r) == joined[r.index].target for r in runs) >= 905
    pattern = next(a for a in big.actions if a.tag == "apply-pattern")
    step = step_of(pattern, joined)
    assert step is not None and step.pass_name == pattern.pass_run().pass_name


def test_chrome_trace_is_valid_and_nested(big) -> None:
    trace = chrome_trace(big)
    events = trace["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == 15725
    for event in events:
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        assert event["ph"] in ("X", "M", "i")
        if event["ph"] == "X":
            assert isinstance(event["ts"], int) and event["dur"] > 0
            assert isinstance(event["name"], str) and event["name"]
    # properly nested on its track: each child lies inside its parent
    by_index = {a.index: a for a in big.actions}
    for action in big.actions[:2000]:
        if action.parent is not None:
            parent = by_index[action.parent.index]
            assert parent.begin < action.begin and action.end < parent.end


def test_truncated_log_is_tolerated(compile_dir: Path, tmp_path: Path) -> None:
    data = (compile_dir / "actions.log").read_bytes()
    cut = data[: len(data) // 2]
    log = read_action_log(cut[: cut.rfind(b"\n") + 1], "cut.log")
    assert log.open_actions
    assert all(not a.completed for a in log.open_actions)
    assert any("never completed" in p.reason for p in log.problems)
    trace = chrome_trace(log)
    open_events = [e for e in trace["traceEvents"] if e.get("args", {}).get("completed") is False]
    assert len(open_events) == len(log.open_actions)
    # cut inside a multi-line op text, and inside a line
    read_action_log(data[:12345], "mid.log")


def test_garbage_and_non_utf8(compile_dir: Path) -> None:
    with pytest.raises(ReadError, match="not UTF-8"):
        read_action_log(b"[thread x] begins Action \xff`\n", "bad.log")
    log = parse_action_log("hello\nworld\n", "g.log")
    assert log.actions == [] and log.problems
    stray = parse_action_log("[thread t] completed `x`\n", "s.log")
    assert any("matches no open action" in p.reason for p in stray.problems)


def test_crlf_line_ends(corpus: Path) -> None:
    """A log that went through a tool writing CRLF line ends reads as the original."""
    data = (corpus / "mlir" / "iree-opt-to-loops" / "actions.log").read_bytes()
    logs = [read_action_log(d, "actions.log") for d in (data, data.replace(b"\n", b"\r\n"))]

    def summary(log) -> list[tuple]:
        return [(a.tag, a.printed, a.units.replace("\r", ""), a.pass_name, a.operation,
                 a.target, a.pattern, a.completed, a.depth) for a in log.actions]

    assert len(logs[0].actions) == 561
    assert summary(logs[1]) == summary(logs[0])
    assert logs[1].problems == logs[0].problems == []


def test_skipping_and_breakpoints() -> None:
    """Lines as ActionLogging.cpp writes them when a breakpoint skips an action."""
    text = ("[thread 7] begins (on breakpoint: Tag: `pass-execution`) Action `pass-execution` "
            "running `CSEPass` on Operation `func.func` (func.func @f() {...})`\n"
            "[thread 7] skipping (no breakpoint) Action `apply-pattern pattern: P (%0 = x)`\n"
            "[thread 7] completed `pass-execution`\n")
    log = parse_action_log(text, "bp.log")
    run, skipped = log.actions
    assert run.breakpoint == "Tag: `pass-execution`" and run.completed
    assert skipped.skipped and skipped.parent is run and skipped.pattern == "P"
    assert log.problems == []
    assert [e["ph"] for e in chrome_trace(log)["traceEvents"][2:]] == ["X", "i"]


def test_module_actions_for_the_tui(compile_dir: Path) -> None:
    from workbench.formats.action_log import load_module_actions

    dump = scan(compile_dir)
    tree = dump.find_module("ir-tree/builtin_module_jit_f")
    loaded = load_module_actions(dump.root, tree)
    assert loaded is not None
    log, joined = loaded
    assert len(log.actions) == 15725 and len(joined) == 912
    assert load_module_actions(dump.root, dump.find_module("input.mlir")) is None

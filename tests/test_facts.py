"""The one store of derived facts: keyed by file signature, bounded, shared by the timeline,
the statistics and the debugger."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbench import stats
from workbench.debug.facts import LOCATIONS, DumpFacts
from workbench.diff.steps import known_changed
from workbench.facts import FACTS, FactKind, FactStore
from workbench.index import scan
from workbench.model import IRKind, Module, Source
from workbench.sources import ReadError
from workbench.stats import known_step_stats, step_stats
from workbench.step_facts import all_known, compute_facts, known_facts
from workbench.tui.context import Selection

LAYERNORM = "xla/layernorm"
COUNTED: FactKind[str] = FactKind("counted-for-a-test", "test", per_byte=1, fixed=10)
OTHER: FactKind[str] = FactKind("in-another-pool", "other", per_byte=1)


@pytest.fixture
def layernorm(corpus: Path, tmp_path: Path) -> tuple[Path, Module]:
    """A copy of the layernorm module's text steps (so files can be rewritten)."""
    for file in (corpus / LAYERNORM).glob("module_0010.jit_ln.*.txt"):
        shutil.copy(file, tmp_path / file.name)
    FACTS.clear()
    return tmp_path, scan(tmp_path).find_module("jit_ln")


def test_make_computes_once_while_the_file_stays_the_same(tmp_path: Path) -> None:
    store = FactStore({"test": (10, 1000)})
    (tmp_path / "a.txt").write_text("abc")
    calls: list[str] = []

    def compute() -> str:
        calls.append("a")
        return f"made {len(calls)}"

    source = Source("a.txt")
    assert store.known(COUNTED, tmp_path, [source]) is None
    assert store.make(COUNTED, tmp_path, [source], compute) == "made 1"
    assert store.make(COUNTED, tmp_path, [source], compute) == "made 1"
    assert store.known(COUNTED, tmp_path, [source]) == "made 1"
    assert store.cost == COUNTED.cost(3) == 13
    (tmp_path / "a.txt").write_text("abcd")  # rewritten in place: another signature
    assert store.known(COUNTED, tmp_path, [source]) is None
    assert store.make(COUNTED, tmp_path, [source], compute) == "made 2"
    (tmp_path / "a.txt").unlink()
    assert store.known(COUNTED, tmp_path, [source]) is None
    with pytest.raises(ReadError, match="file not found"):
        store.make(COUNTED, tmp_path, [source], compute)


def test_each_pool_is_bounded_by_cost(tmp_path: Path) -> None:
    store = FactStore({"test": (100, 50), "other": (100, 1000)})
    (tmp_path / "kept").write_text("x" * 100)
    store.make(OTHER, tmp_path, [Source("kept")], lambda: "other pool")
    for name in "abcd":
        (tmp_path / name).write_text("x" * 10)  # cost 20 each
        store.make(COUNTED, tmp_path, [Source(name)], lambda name=name: name)
    assert store.pools["test"].cost <= 50
    assert store.known(COUNTED, tmp_path, [Source("a")]) is None  # the oldest went first
    assert store.known(COUNTED, tmp_path, [Source("d")]) == "d"
    assert store.known(OTHER, tmp_path, [Source("kept")]) == "other pool"  # not pushed out
    assert len(store) == 3 and store.cost == 100 + 2 * 20


def test_one_count_serves_the_timeline_and_the_debugger(
        layernorm: tuple[Path, Module], monkeypatch: pytest.MonkeyPatch) -> None:
    root, module = layernorm
    counted: list[str] = []
    real = stats.ir_stats

    def counting(text: str, ir: IRKind) -> stats.IrStats:
        counted.append(ir)
        return real(text, ir)

    monkeypatch.setattr(stats, "ir_stats", counting)
    assert not all_known(root, module)
    steps = list(compute_facts(root, module))
    assert steps == module.steps
    assert len(counted) == len(module.steps)
    assert all_known(root, module)
    debugger = DumpFacts(root, module)
    fusion = next(s for s in module.steps if s.pass_name == "fusion")
    info = debugger.info(fusion, ops=True)
    assert info.ops["fusion"] >= 1 and info.ops_before.get("fusion", 0) == 0
    assert len(counted) == len(module.steps)  # the debugger counted nothing again
    facts = known_facts(root, fusion)
    assert facts.changed is True and facts.stats == step_stats(root, fusion)


def test_changed_flags_follow_the_files_they_were_made_from(
        layernorm: tuple[Path, Module]) -> None:
    root, module = layernorm
    list(compute_facts(root, module))
    fusion = next(s for s in module.steps if s.pass_name == "fusion")
    before = module.steps[fusion.index - 1]
    assert known_changed(root, fusion) is True
    assert known_changed(root, before) is False
    assert before.text is not None
    path = root / before.text.file
    path.write_text(path.read_text() + "\n")  # the step compared with was rewritten
    assert known_changed(root, fusion) is None


def test_unreadable_steps_keep_their_reason(layernorm: tuple[Path, Module]) -> None:
    root, module = layernorm
    step = module.steps[3]
    assert step.text is not None
    (root / step.text.file).write_bytes(b"\xff\xfe not text")
    with pytest.raises(ReadError, match="not UTF-8"):
        step_stats(root, step)
    known = known_step_stats(root, step)
    assert isinstance(known, ReadError) and "not UTF-8" in known.reason


def test_locations_are_facts_of_the_store(layernorm: tuple[Path, Module]) -> None:
    root, module = layernorm
    step = module.steps[1]
    assert step.text is not None
    located = DumpFacts(root, module).location_ops(step)
    assert located  # the layernorm program's lines
    assert FACTS.known(LOCATIONS, root, [step.text], params=(step.ir,)) == located


def test_the_selection_runs_the_selected_execution_else_the_first(corpus: Path) -> None:
    module = scan(corpus / LAYERNORM).find_module("jit_ln")
    assert module.executions
    selection = Selection(module=module)
    assert selection.execution_or_first() is module.executions[0]
    chosen = module.executions[-1]
    selection.execution = chosen
    assert selection.execution_or_first() is chosen
    assert Selection().execution_or_first() is None

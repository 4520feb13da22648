"""`check_dump`: every step and execution read once; damaged files become problems."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench import sources
from workbench.check import check_dump
from workbench.facts import FACTS
from workbench.index import scan
from workbench.loader import read_hlo_file

LAYERNORM = Path("xla/layernorm")


def test_real_dumps_have_no_problems(corpus: Path) -> None:
    for folder in ("xla/layernorm", "xla/fori_loop", "mlir/mlir-trace-broken"):
        dump = scan(corpus / folder)
        assert check_dump(dump) == [], folder


def test_progress_is_reported(corpus: Path) -> None:
    dump = scan(corpus / "xla" / "fori_loop")
    seen: list[tuple[int, int]] = []
    check_dump(dump, lambda done, total: seen.append((done, total)))
    total = seen[-1][1]
    steps = sum(bool(s.text) + bool(s.proto) for m in dump.modules for s in m.steps)
    assert total == steps + sum(len(m.executions) for m in dump.modules)
    assert [done for done, _ in seen] == list(range(1, total + 1))


def damaged_copy(corpus: Path, tmp_path: Path) -> dict[str, str]:
    """jit_ln's files copied, some damaged the ways a real dump gets damaged; returns
    {file: expected reason} for the damaged ones."""
    source = corpus / LAYERNORM
    for path in source.glob("module_0010.jit_ln.*"):
        if path.is_file():
            shutil.copy(path, tmp_path / path.name)
    names = sorted(p.name for p in tmp_path.iterdir())
    texts = [n for n in names if n.endswith(".txt") and ".00" in n]
    protos = [n for n in names if n.endswith(".hlo.pb") and ".00" in n]
    snapshot = next(n for n in names if ".snapshot." in n)
    expected = {}

    def damage(name: str, data: bytes, reason: str) -> None:
        (tmp_path / name).write_bytes(data)
        expected[name] = reason

    damage(protos[0], b"\x8b\xad\xf0\x0d" * 50, "not an HloProto")
    whole = (tmp_path / protos[1]).read_bytes()
    damage(protos[1], whole[: len(whole) // 2], "HloProto|truncated|not defined|not in the")
    damage(protos[2], b"", "empty file")
    damage(texts[3], b"", "empty file")
    text = (tmp_path / texts[4]).read_bytes()
    damage(texts[4], text[:100] + b"\xff\xfe" + text[100:], "not UTF-8 text")
    damage(texts[5], text[: len(text) // 2], "line [0-9]+, column [0-9]+")
    data = (tmp_path / snapshot).read_bytes()
    damage(snapshot, data[: len(data) - 5], "not an HloSnapshot")
    return expected


def test_damaged_files_are_problems(corpus: Path, tmp_path: Path) -> None:
    expected = damaged_copy(corpus, tmp_path)
    dump = scan(tmp_path)
    gone = next(s for m in dump.modules for s in m.steps if s.xla_step == 20).text
    assert gone is not None
    (tmp_path / gone.file).unlink()  # deleted between listing and reading
    expected[gone.file] = "file not found"
    problems = {p.file: p.reason for p in check_dump(dump)}
    assert set(problems) == set(expected)
    for file, reason in expected.items():
        assert re.search(reason, problems[file]), (file, problems[file])


def test_unreadable_files(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(corpus / LAYERNORM / "module_0010.jit_ln.before_optimizations.txt", tmp_path)
    dump = scan(tmp_path)

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sources, "open", denied, raising=False)
    problems = check_dump(dump)
    assert [(p.file, p.reason) for p in problems] == [
        ("module_0010.jit_ln.before_optimizations.txt", "permission denied")]


def test_check_does_not_fill_the_cache(corpus: Path) -> None:
    FACTS.clear()
    check_dump(scan(corpus / "xla" / "fori_loop"))
    assert len(FACTS) == 0


def large_module(instructions: int) -> str:
    """A module of `instructions` plain instructions in a chain (made here, never stored)."""
    lines = ["HloModule big, entry_computation_layout={(f32[8])->f32[8]}", "",
             "ENTRY main {", "  p0 = f32[8] parameter(0)", "  a0 = f32[8] negate(p0)"]
    lines += [f"  a{i} = f32[8] add(a{i - 1}, p0)" for i in range(1, instructions - 1)]
    lines += [f"  ROOT r = f32[8] negate(a{instructions - 2})", "}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda text: text[: text.index("  a10000 = ") + len("  a10000 = f32[8] ad")],
     "line 10005, column 21: expected '(' after opcode ad"),
    (lambda text: text.replace("  a5000 = f32[8] add(", "  a5000 = f32[8] Add("),
     "line 5005, column 18: expected an opcode"),
    (lambda text: text.replace("add(a4999, p0)\n", "add(a4999, p0)}\n"),
     "line 5006, column 9: expected '{', found '= f32[8] add(a5000, '"),
    (lambda text: text[: -len("}\n")],
     "line 3, column 6: computation 'main' is not closed with '}'"),
    (lambda text: text.replace("add(a7000, p0)", "add(a7000, q0)"),
     "line 7006, column 29: unknown operand %q0 in computation 'main'"),
    (lambda text: text.replace("  a9000 = f32[8]", "  a9000 = f32[8]{1,0}"),
     "line 9005, column 17: layout {1,0} does not match rank 1"),
], ids=["cut mid-line", "bad opcode", "brace too many", "brace missing", "unknown operand",
        "bad layout"])
def test_damaged_large_module(tmp_path: Path, damage: Callable[[str], str],
                              reason: str) -> None:
    """A 20,000-instruction module damaged far from its start: the damage is found, with
    its line and column."""
    name = "module_0001.big.before_optimizations.txt"
    text = large_module(20_000)
    (tmp_path / name).write_text(text)
    assert check_dump(scan(tmp_path)) == []
    (tmp_path / name).write_text(damage(text))
    assert [(p.file, p.reason) for p in check_dump(scan(tmp_path))] == [(name, reason)]


def test_text_and_proto_that_disagree(tmp_path: Path) -> None:
    """A step whose text says `add` where its proto says `multiply`: the app shows one, the
    replay judges the other, so the check names both files."""
    source = Path(__file__).parent / "data" / "corpus" / "xla" / "layernorm"
    root = tmp_path / "dump"
    shutil.copytree(source, root)
    (text,) = root.glob("module_0010.jit_ln.0028.*.txt")
    content = text.read_text()
    assert " multiply(" in content
    text.write_text(content.replace(" multiply(", " add(", 1))
    problems = check_dump(scan(root))
    (problem,) = [p for p in problems if "disagrees" in p.reason]
    assert problem.file == text.name
    assert problem.reason.startswith(f"disagrees with {text.name[:-4]}.hlo.pb: ")
    assert "add 2 against 1, multiply 2 against 3" in problem.reason
    assert "the replay judges the proto" in problem.reason
    text.write_text(content)
    assert not [p for p in check_dump(scan(root)) if "disagrees" in p.reason]


def test_unused_tuple_element_is_not_a_disagreement() -> None:
    """JAX 0.12's top-k of which only the indices are used: the TopK custom call's values are a
    get-tuple-element without users (until DCE) that the proto holds and the text, which
    prints a get-tuple-element only as its use (`%custom-call#1`), does not. Both hold the
    same program; a used get-tuple-element missing from one of them still disagrees."""
    root = Path(__file__).parent / "data" / "producers" / "topk_indices_only"
    problems = check_dump(scan(root))
    assert not [p for p in problems if "disagrees" in p.reason]
    module = scan(root).modules[0]
    assert len([s for s in module.steps if s.text and s.proto]) == 4


def test_two_reads_of_one_tuple_element_are_not_a_disagreement() -> None:
    """An rbg key split's threefry loop: its body reads element 0 of its parameter through two
    get-tuple-elements in the proto, one `%arg_tuple.6#0` in the text: the same program."""
    root = Path(__file__).parent / "data" / "producers" / "rbg_split_loop"
    (step,) = [s for s in scan(root).modules[0].steps if s.text and s.proto]
    assert step.proto is not None
    proto = read_hlo_file(root, step.proto, "proto")
    reads = Counter((tuple(i.operands), i.tuple_index) for c in proto.computations
                    for i in c.instructions if i.opcode == "get-tuple-element")
    assert max(reads.values()) == 2
    assert not [p for p in check_dump(scan(root)) if "disagrees" in p.reason]

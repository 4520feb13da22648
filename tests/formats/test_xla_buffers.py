"""Buffer assignment and memory usage reports: every one in the corpus, and broken copies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.formats.xla_buffers import (
    human_bytes,
    read_buffer_assignment,
    read_memory_usage,
)
from workbench.loader import ReadError


def _files(corpus: Path, suffix: str) -> list[Path]:
    return sorted(corpus.glob(f"xla/*/*{suffix}"))


def test_every_buffer_assignment(corpus: Path) -> None:
    files = _files(corpus, "-buffer-assignment.txt")
    assert len(files) >= 30
    for file in files:
        text = file.read_text()
        assignment = read_buffer_assignment(text, file.name)
        headers = re.findall(r"^allocation \d+: size (\d+)", text, re.MULTILINE)
        assert [a.size for a in assignment.allocations] == [int(s) for s in headers]
        assert sum(len(a.values) for a in assignment.allocations) == text.count("\n value: ")
        assert assignment.total_bytes == sum(count_bytes[1] for count_bytes in
                                             assignment.by_role().values())


def test_mlp_roles(corpus: Path) -> None:
    file = corpus / "xla/mlp/module_0014.jit_mlp.cpu_after_optimizations-buffer-assignment.txt"
    assignment = read_buffer_assignment(file.read_text(), file.name)
    roles = assignment.by_role()
    assert roles["parameter"] == (4, 2048 + 1280 + 512 + 128)
    assert roles["output"] == (1, 320) and roles["thread-local"] == (6, 24)
    assert roles["preallocated-temp"] == (1, 1024)
    output = next(a for a in assignment.allocations if a.role == "output")
    assert "live-out" in output.roles and "ynn_fusion" in output.values
    assert [a.size for a in assignment.largest(2)] == [2048, 1280]


def test_every_memory_usage_report(corpus: Path) -> None:
    files = _files(corpus, "-memory-usage-report.txt")
    assert files
    for file in files:
        text = file.read_text()
        spaces = read_memory_usage(text, file.name)
        totals = [int(n) for n in re.findall(r"^Total bytes: (\d+)", text, re.MULTILINE)]
        assert [s.total_bytes for s in spaces] == totals
        assert spaces[0].name == "default" and spaces[0].color == 0


@pytest.mark.parametrize("garbage", ["", "hello\n", "\x00\x01binary", " value: <1 x @0> (size=4"])
def test_garbage_is_a_read_error(garbage: str) -> None:
    with pytest.raises(ReadError):
        read_buffer_assignment(garbage, "bad.txt")
    with pytest.raises(ReadError):
        read_memory_usage(garbage, "bad.txt")


def test_truncated_copy_keeps_what_is_there(corpus: Path) -> None:
    file = corpus / "xla/mlp/module_0014.jit_mlp.cpu_after_optimizations-buffer-assignment.txt"
    text = file.read_text()
    cut = text[: text.index("allocation 5")]
    assert len(read_buffer_assignment(cut, file.name).allocations) == 5


def test_human_bytes() -> None:
    assert human_bytes(564) == "564 B"
    assert human_bytes(2872) == "2.8 KiB"
    assert human_bytes(3 * 1024**3) == "3.0 GiB"

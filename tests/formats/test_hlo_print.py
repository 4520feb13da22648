"""HLO text printed from a proto: the text XLA prints for it, so a step dumped only as a proto
is shown and diffed like one dumped as text."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.diff.ir_diff import diff_texts
from workbench.diff.steps import diff_steps, find_step
from workbench.formats.hlo_print import print_module, printed_source
from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.snapshot import read_snapshot
from workbench.index import scan
from workbench.replay.hlo import evaluate_module
from workbench.sources import read_text

PRODUCERS = Path(__file__).parent.parent / "data" / "producers"
JAX12 = PRODUCERS / "topk_sort_take"


def without_header(text: str) -> str:
    """The module's text after its `HloModule` line (the proto lacks the config flags XLA
    prints there) and the source tables (which the proto keeps apart)."""
    body = text.split("\n", 1)[1].lstrip()
    return body[body.index("\n%") + 1:] if body.startswith("FileNames") else body


def computations(text: str) -> dict[str, str]:
    """Each computation's lines by its name."""
    blocks = without_header(text).strip().split("\n\n")
    return {block.split(" (", 1)[0].removeprefix("ENTRY "): block for block in blocks}


@pytest.mark.parametrize("proto", sorted(JAX12.glob("*.hlo.pb")), ids=lambda p: p.name[31:60])
def test_printed_proto_diffs_clean_against_xla_text(proto: Path) -> None:
    """Computation by computation (the proto lists them in another order than the text, which
    it does not record)."""
    text = computations(proto.with_name(proto.name[: -len(".hlo.pb")] + ".txt").read_text())
    printed = computations(print_module(read_hlo_proto(proto.read_bytes(), proto.name)))
    assert printed.keys() == text.keys()
    for name, block in text.items():
        diff = diff_texts(block, printed[name], "hlo")
        assert diff.equal, (name, diff.removed, diff.added)
        assert block.count("\n") == printed[name].count("\n")  # the same lines, as written


def test_printed_text_reads_back_as_the_same_program() -> None:
    """Printed, parsed and evaluated on the snapshot's inputs: the recorded result."""
    name = "module_0004.jit_topk_sort_take.cpu_after_optimizations"
    module = read_hlo_proto((JAX12 / f"{name}.hlo.pb").read_bytes(), name)
    again = parse_hlo_text(print_module(module), name)
    assert [c.name for c in again.computations] == [c.name for c in module.computations]
    (snapshot_file,) = JAX12.glob("*.snapshot.*.pb")
    snapshot = read_snapshot(snapshot_file.read_bytes(), snapshot_file.name)
    for got, recorded in zip(evaluate_module(again, snapshot.arguments), snapshot.result,
                             strict=True):
        np.testing.assert_array_equal(got, recorded)


def test_older_syntax_prints_get_tuple_elements_as_lines() -> None:
    name = "module_0004.jit_topk_sort_take.cpu_after_optimizations"
    module = read_hlo_proto((JAX12 / f"{name}.hlo.pb").read_bytes(), name)
    older = print_module(module, newer_syntax=False)
    assert "#0" not in older and "get-tuple-element(%custom-call), index=0" in older
    before = "module_0004.jit_topk_sort_take.before_optimizations"
    sorting = read_hlo_proto((JAX12 / f"{before}.hlo.pb").read_bytes(), before)
    older = print_module(sorting, newer_syntax=False)
    assert "type=TOTALORDER" in older and "order=TOTAL" not in older
    assert "order=TOTAL" in print_module(sorting)


def test_a_proto_only_step_is_shown_and_diffed(tmp_path: Path) -> None:
    folder = tmp_path / "dump"
    shutil.copytree(JAX12, folder)
    for text in folder.glob("*.txt"):
        text.unlink()
    (module,) = scan(folder).modules
    a, b = find_step(module, "0015"), find_step(module, "0016")
    assert a.text is None and b.proto is not None
    source = printed_source(b)
    assert source is not None and 'custom_call_target="TopK"' in read_text(folder, source)
    diff = diff_steps(folder, a, b)
    assert not diff.equal and diff.added >= 1
    # the same diff as between the two text dumps
    (with_text,) = scan(JAX12).modules
    text_diff = diff_steps(JAX12, find_step(with_text, "0015"), find_step(with_text, "0016"))
    assert (diff.removed, diff.added) == (text_diff.removed, text_diff.added)

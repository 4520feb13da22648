"""`workbench reduce`: the reduced folder is small, reads back as a dump, and shows the same
departure; `--out` never goes into a dump or over a non-empty folder without --force."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import localize_cases as cases
from tests.helpers.localize_dumps import write_dump
from workbench.cli import main
from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.literal import literal_from_proto
from workbench.formats.literal_write import literal_to_proto
from workbench.hlo_ir import Shape, numpy_dtype


@pytest.mark.parametrize("name", ["ENTRY", "FUSION", "LOOP", "REDUCE", "LATE_LOOP"])
def test_reduced_folder_reproduces(tmp_path: Path, name: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", getattr(cases, f"{name}_BEFORE"),
                      getattr(cases, f"{name}_AFTER"), getattr(cases, f"{name}_ARGS"))
    out = tmp_path / "reduced"
    assert main(["reduce", str(root), "t", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["reproduces"] and payload["verdict"] == "mismatch"
    assert payload["culprit"] == "planted"
    assert payload["reference_check"]["ok"]
    texts = sorted(t for t in out.glob("*.txt") if t.name != "README.txt")
    assert len(texts) == 2
    for text, count in zip(texts, (payload["instructions"]["before"],
                                   payload["instructions"]["after"]), strict=True):
        module = parse_hlo_text(text.read_text(), text.name)  # what run_hlo_module reads
        assert module.instruction_count() - sum(
            len(module.by_name[c].instructions) for c in _scalar_callees(module)) == count
        assert count <= 10
    # The reduced folder triages to the same verdict.
    assert main(["triage", str(out), "-j", "0", "--json"]) == 1
    triaged = json.loads(capsys.readouterr().out)["results"][0]
    assert triaged["status"] == "mismatch" and triaged["culprit"]["pass"] == "planted"


def _scalar_callees(module) -> list[str]:
    """Reducers copied along with the instruction (not counted as the slice)."""
    return [c.name for c in module.computations
            if not c.is_entry and not c.name.startswith("fused")]


def test_out_inside_the_dump_is_refused(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.ENTRY_BEFORE, cases.ENTRY_AFTER,
                      cases.ENTRY_ARGS)
    before = sorted(p.name for p in root.iterdir())
    assert main(["reduce", str(root), "t", "--out", str(root / "r")]) == 2
    assert "inside the dump" in capsys.readouterr().err
    assert sorted(p.name for p in root.iterdir()) == before


def test_non_empty_out_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.ENTRY_BEFORE, cases.ENTRY_AFTER,
                      cases.ENTRY_ARGS)
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["reduce", str(root), "t", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["reduce", str(root), "t", "--out", str(out), "--force"]) == 0
    assert (out / "keep.txt").read_text() == "mine"


def test_nothing_to_reduce_without_a_culprit_instruction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_dump(tmp_path / "dump", cases.UNMATCHED_BEFORE, cases.UNMATCHED_AFTER,
                      cases.ENTRY_ARGS)
    assert main(["reduce", str(root), "t", "--out", str(tmp_path / "r")]) == 2
    assert "nothing to reduce" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("element_type", ["f32", "f64", "bf16", "f16", "s4", "u4", "pred",
                                          "s8", "s32", "u16", "c64", "f8e4m3fn"])
def test_literal_writer_round_trips(element_type: str) -> None:
    dtype = numpy_dtype(element_type)
    values = (np.arange(6, dtype=np.float64) - 2).reshape(2, 3)
    array = (values > 0) if element_type == "pred" else values.astype(dtype)
    back = literal_from_proto(literal_to_proto(array, Shape(element_type, (2, 3))))
    assert back.dtype == array.dtype
    np.testing.assert_array_equal(back, array)


def test_literal_writer_scalars_and_tuples() -> None:
    shape = Shape("tuple", tuple_shapes=(Shape("f32", ()), Shape("s32", (2,))))
    value = (np.array(1.5, np.float32), np.array([3, -4], np.int32))
    back = literal_from_proto(literal_to_proto(value, shape))
    assert back[0].shape == () and float(back[0]) == 1.5
    np.testing.assert_array_equal(back[1], value[1])
